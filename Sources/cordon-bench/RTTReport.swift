import Foundation

/// One call measured over the agent's socket against the separate-process echo, per placement.
struct RTTReport: Codable {
    let method: String
    let requestBytes: Int
    let replyBytes: Int
    let placements: [RTTPlacementReport]

    func printTable() {
        let runs = placements.first?.runs.count ?? 0
        let count = placements.first?.runs.first?.agent.count ?? 0
        print(
            "rtt: \(method) (request \(requestBytes) B, reply \(replyBytes) B) vs a separate-process C echo of the "
                + "same sizes; \(runs) runs of \(count) round trips per side, alternating; then the floor (the system "
                + "calls a call must make) against the echo, the same way")
        print(
            "placement  run  agent median  agent p99  echo median  echo p99  agent cost µs  ratio   target"
                + "            floor median  floor ratio")
        for placement in placements {
            for (index, run) in placement.runs.enumerated() {
                let target = placement.target.map {
                    String(format: "<= %.1fx %@", $0, run.met == true ? "met" : "not met")
                }
                print(
                    placement.placement.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                        + String(
                            format: " %3d  %12.1f  %9.1f  %11.1f  %8.1f  %12.1f  %5.2fx  ", index + 1,
                            run.agent.medianMicroseconds, run.agent.p99Microseconds, run.echo.medianMicroseconds,
                            run.echo.p99Microseconds, run.agentCostMicroseconds, run.ratio)
                        + (target ?? "-").padding(toLength: 18, withPad: " ", startingAt: 0)
                        + (run.floor.map {
                            String(format: "%12.1f  %10.2fx", $0.medianMicroseconds, run.floorRatio ?? 0)
                        } ?? ""))
            }
            print("  " + placement.summary)
        }
        print("")
    }
}

/// The runs of one placement.
struct RTTPlacementReport: Codable {
    let placement: RoundTripPlacement
    let target: Double?
    let runs: [RTTRun]

    /// The spread of the ratio and of the agent's cost, and how many runs met the target.
    var summary: String {
        let ratios = runs.map(\.ratio).sorted()
        let costs = runs.map(\.agentCostMicroseconds).sorted()
        guard let low = ratios.first, let high = ratios.last, let cheapest = costs.first, let dearest = costs.last
        else { return "\(placement.rawValue): no runs" }
        var line = String(
            format: "%@: ratio %.2f–%.2fx (median %.2fx), agent cost %.1f–%.1f µs", placement.rawValue, low, high,
            ratios[ratios.count / 2], cheapest, dearest)
        let floors = runs.compactMap(\.floorRatio).sorted()
        if let lowFloor = floors.first, let highFloor = floors.last {
            line += String(format: "; floor %.2f–%.2fx of the echo", lowFloor, highFloor)
        }
        if let target {
            line += String(
                format: "; %d of %d runs met <= %.1fx", runs.filter { $0.met == true }.count, runs.count, target)
        }
        return line
    }
}

/// One run: each side's latencies, the agent's ratio and difference to the echo, and the floor's
/// ratio to it.
struct RTTRun: Codable {
    let agent: LatencyStats
    let echo: LatencyStats
    /// The floor's latencies (nil in reports written before it was measured).
    let floor: LatencyStats?
    /// Median floor / median echo, both from the floor's own pass: what the system calls a call
    /// must make cost.
    let floorRatio: Double?
    /// Median agent / median echo.
    let ratio: Double
    /// Median agent minus median echo: what the agent adds to a socket round trip.
    let agentCostMicroseconds: Double
    /// Whether the ratio is within the placement's target (nil when there is none).
    let met: Bool?

    /// `floor` and `floorEcho` come from the floor's own pass.
    init(agent: LatencyStats, echo: LatencyStats, floor: LatencyStats, floorEcho: LatencyStats, target: Double?) {
        self.agent = agent
        self.echo = echo
        self.floor = floor
        floorRatio = floor.medianMicroseconds / max(floorEcho.medianMicroseconds, 0.001)
        let ratio = agent.medianMicroseconds / max(echo.medianMicroseconds, 0.001)
        self.ratio = ratio
        agentCostMicroseconds = agent.medianMicroseconds - echo.medianMicroseconds
        met = target.map { ratio <= $0 }
    }
}
