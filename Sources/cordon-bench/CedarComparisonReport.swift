import Foundation

/// One policy decided by both engines: nanoseconds per decision over the same request mix.
struct CedarPolicyComparison: Codable {
    /// The Cordon policy (merged as an admin file over the built-in default).
    let policy: String
    /// Its Cedar translation.
    let cedarPolicy: String
    let requests: Int
    let allowed: Int
    let denied: Int
    let cordonMedianNanoseconds: Double
    let cordonP99Nanoseconds: Double
    let cedarMedianNanoseconds: Double
    let cedarP99Nanoseconds: Double
    /// The Rust engine alone, from cedarpy's own per-request metric (whole microseconds, so a
    /// mean over the batch): what Cedar costs without the Python binding.
    let cedarEngineMedianNanoseconds: Double
    let cedarEngineP99Nanoseconds: Double
    /// Cedar's median over Cordon's: how many times faster Cordon decides.
    let medianRatio: Double
    let p99Ratio: Double
    /// The Rust engine's median alone over Cordon's.
    let engineMedianRatio: Double
    /// Each run's `medianRatio`, when the comparison ran several times (the figures above are then
    /// the medians of the runs').
    var runRatios: [Double] = []
}

/// The Cedar comparison of `cordon-bench policy`, or why it was skipped.
struct CedarComparisonReport: Codable {
    /// `measured` or `skipped`.
    let status: String
    let skipReason: String?
    /// The cedarpy package version (the Cedar engine's major and minor).
    let cedarpyVersion: String?
    /// Repetitions of each policy's whole request mix, per engine.
    let repetitions: Int
    let policies: [CedarPolicyComparison]
    /// The smallest `medianRatio`: the target holds when it is above 1.
    let slowestMedianRatio: Double?
    let target: String
    /// Whether Cordon's median is below Cedar's on every policy (nil when skipped).
    let passed: Bool?

    static let targetText = "in-process evaluation faster than Cedar (cedarpy) on equivalent rules"

    static func skipped(_ reason: String, repetitions: Int) -> CedarComparisonReport {
        CedarComparisonReport(
            status: "skipped", skipReason: reason, cedarpyVersion: nil, repetitions: repetitions, policies: [],
            slowestMedianRatio: nil, target: targetText, passed: nil)
    }

    static func measured(
        version: String, repetitions: Int, policies: [CedarPolicyComparison]
    ) -> CedarComparisonReport {
        let slowest = policies.map(\.medianRatio).min()
        return CedarComparisonReport(
            status: "measured", skipReason: nil, cedarpyVersion: version, repetitions: repetitions,
            policies: policies, slowestMedianRatio: slowest, target: targetText,
            passed: policies.allSatisfy { $0.cordonMedianNanoseconds < $0.cedarMedianNanoseconds })
    }

    /// The table, the verdict and one JSON line.
    func printTable() {
        guard status == "measured" else {
            print("policy vs Cedar: skipped: \(skipReason ?? "no reason given")")
            print("")
            return
        }
        let version = cedarpyVersion ?? "?"
        print("policy vs Cedar (cedarpy \(version)): ns per decision, \(repetitions) repetitions of each request mix")
        print(
            "policy              requests allow deny  cordon median    p99  cedarpy median     p99"
                + "   ratio  engine only  ratio")
        for row in policies {
            let name = ((row.policy as NSString).lastPathComponent as NSString).deletingPathExtension
            print(
                name.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8d %5d %4d %14.0f %6.0f %15.0f %7.0f %6.0f× %12.0f %5.0f×", row.requests,
                        row.allowed, row.denied, row.cordonMedianNanoseconds, row.cordonP99Nanoseconds,
                        row.cedarMedianNanoseconds, row.cedarP99Nanoseconds, row.medianRatio,
                        row.cedarEngineMedianNanoseconds, row.engineMedianRatio))
        }
        let decisions = policies.reduce(0) { $0 + $1.requests }
        print("both engines decided all \(decisions) requests the same (ratio: Cedar median / Cordon median;")
        print("engine only: cedarpy's authz_duration_micros per request, without the Python binding)")
        for row in policies where row.runRatios.count > 1 {
            let name = ((row.policy as NSString).lastPathComponent as NSString).deletingPathExtension
            print(
                "\(name): \(row.runRatios.count) runs (the figures are their medians), ratio per run: "
                    + row.runRatios.map { String(format: "%.1f×", $0) }.joined(separator: " "))
        }
        let verdict = passed == true ? "PASS" : "FAIL"
        print(String(format: "target: %@: %@ (slowest ratio %.1f×)", Self.targetText, verdict, slowestMedianRatio ?? 0))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let line = try? encoder.encode(["cedarComparison": self]) {
            print(String(decoding: line, as: UTF8.self))
        }
        print("")
    }
}
