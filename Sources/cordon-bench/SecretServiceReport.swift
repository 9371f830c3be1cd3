import CordonBenchSummary
import Foundation

/// Storage.Get against the Secret Service peers, per placement (`SecretServiceComparison`).
struct SecretServiceReport: Codable {
    let iterations: Int
    let targets: [SecretServiceTarget]
    let placements: [SecretServicePlacementReport]

    /// What the ratios are measured against in the summary.
    static let baseline = "a real Secret Service on a private bus, same 1 KiB secret, interleaved per call"

    func printTable() {
        let runs = placements.first?.runs.count ?? 0
        print(
            "rtt: Storage.Get (1 KiB) vs Secret Service peers on a private bus; \(runs) runs of \(iterations) "
                + "calls per side, interleaved call by call, each call timed alone")
        print("placement  run  side                                   median µs   p99 µs  Storage.Get ÷ side  target")
        for placement in placements {
            for (index, run) in placement.runs.enumerated() {
                let name = placement.placement.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                print(
                    name
                        + String(
                            format: " %3d  %@  %9.1f  %7.1f", index + 1,
                            "Storage.Get".padding(toLength: 37, withPad: " ", startingAt: 0),
                            run.storageGet.medianMicroseconds, run.storageGet.p99Microseconds))
                for peer in run.peers {
                    let target = peer.target.map {
                        String(format: "<= %.1fx %@", $0, peer.met == true ? "met" : "not met")
                    }
                    print(
                        name
                            + String(
                                format: " %3d  %@  %9.1f  %7.1f  %17.3fx  ", index + 1,
                                peer.name.padding(toLength: 37, withPad: " ", startingAt: 0),
                                peer.stats.medianMicroseconds, peer.stats.p99Microseconds, peer.ratio)
                            + (target ?? "for information"))
                }
            }
            for line in placement.summary(targets) { print("  " + line) }
        }
        print("")
    }

    /// One record per peer call with a target, per placement: each run's Storage.Get ÷ peer.
    var summaryRecords: [SummaryRecord] {
        placements.flatMap { placement in
            targets.compactMap { side in
                side.target.map { target in
                    SummaryRecord(
                        benchmark: "rtt", subject: "Storage.Get ÷ \(side.name), \(placement.placement.rawValue)",
                        comparison: .atMost, targetValue: target, unit: "×", baseline: Self.baseline,
                        values: placement.runs.compactMap { $0.peers.first { $0.name == side.name }?.ratio })
                }
            }
        }
    }

    /// The records of the peers with a target when they were not measured, and why.
    static func skippedRecords(
        targets: [SecretServiceTarget], placements: [RoundTripPlacement], reason: String
    ) -> [SummaryRecord] {
        placements.flatMap { placement in
            targets.compactMap { side in
                side.target.map { target in
                    SummaryRecord.skipped(
                        benchmark: "rtt", subject: "Storage.Get ÷ \(side.name), \(placement.rawValue)",
                        comparison: .atMost, targetValue: target, unit: "×", baseline: baseline, reason: reason)
                }
            }
        }
    }
}

/// A peer call and the ratio Storage.Get ÷ it the issue sets (nil: for information).
struct SecretServiceTarget: Codable {
    let name: String
    let target: Double?
}

/// The runs of one placement.
struct SecretServicePlacementReport: Codable {
    let placement: RoundTripPlacement
    let runs: [SecretServiceRun]

    /// Per peer call: the spread of the ratio, its median over the runs and the verdict.
    func summary(_ targets: [SecretServiceTarget]) -> [String] {
        targets.map { side in
            let ratios = runs.compactMap { $0.peers.first { $0.name == side.name }?.ratio }.sorted()
            guard let low = ratios.first, let high = ratios.last else { return "\(side.name): no runs" }
            let median = ratios[ratios.count / 2]
            var line = String(
                format: "%@, %@: Storage.Get ÷ it %.3f–%.3fx (median %.3fx)", placement.rawValue, side.name, low, high,
                median)
            if let target = side.target {
                line += String(
                    format: "; target <= %.1fx %@ (%d of %d runs)", target, median <= target ? "met" : "not met",
                    ratios.filter { $0 <= target }.count, ratios.count)
            } else {
                line += " (for information, no target)"
            }
            return line
        }
    }
}

/// One run: Storage.Get's latencies and each peer call's.
struct SecretServiceRun: Codable {
    let storageGet: LatencyStats
    let peers: [SecretServicePeerRun]
}

/// One peer call in one run.
struct SecretServicePeerRun: Codable {
    let name: String
    let stats: LatencyStats
    /// Storage.Get's median ÷ this call's.
    let ratio: Double
    let target: Double?
    /// Whether the ratio is within the target (nil when there is none).
    let met: Bool?

    init(name: String, stats: LatencyStats, target: Double?, storageGet: LatencyStats) {
        self.name = name
        self.stats = stats
        self.target = target
        let ratio = storageGet.medianMicroseconds / max(stats.medianMicroseconds, 0.001)
        self.ratio = ratio
        met = target.map { ratio <= $0 }
    }
}
