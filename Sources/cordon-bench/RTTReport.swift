import Foundation

/// One call measured over the agent's socket against the raw echo.
struct RTTReport: Codable {
    let method: String
    let requestBytes: Int
    let replyBytes: Int
    let agent: LatencyStats
    let rawEcho: LatencyStats
    let medianRatio: Double
    let p99Ratio: Double
    let target: String

    func printTable() {
        let format = { (value: Double) in String(format: "%9.1f", value) }
        let label = "cordond " + method
        print("rtt: \(method) over the agent socket vs raw Unix-socket echo (\(agent.count) round trips each)")
        print("                      median µs     p99 µs    mean µs")
        print(
            label.padding(toLength: 22, withPad: " ", startingAt: 0) + "\(format(agent.medianMicroseconds))  "
                + "\(format(agent.p99Microseconds))  \(format(agent.meanMicroseconds))")
        print(
            "raw socket echo       \(format(rawEcho.medianMicroseconds))  \(format(rawEcho.p99Microseconds))  "
                + "\(format(rawEcho.meanMicroseconds))")
        print(
            String(format: "ratio (agent / raw)   median %.2f×, p99 %.2f×   target: %@", medianRatio, p99Ratio, target))
        print("")
    }
}
