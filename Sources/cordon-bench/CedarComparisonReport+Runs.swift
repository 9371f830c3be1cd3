import CordonBenchSummary
import Foundation

extension CedarComparisonReport {
    /// Several runs of the comparison as one report: per policy, each figure the median of the
    /// runs', and each run's ratio kept. The first run's report when it was skipped or alone.
    static func merged(_ runs: [CedarComparisonReport]) -> CedarComparisonReport {
        guard let first = runs.first, first.status == "measured", runs.count > 1, let version = first.cedarpyVersion
        else { return runs.first ?? .skipped("no runs", repetitions: 0) }
        let policies = first.policies.indices.map { index in
            let rows = runs.map { $0.policies[index] }
            let median = { (figure: KeyPath<CedarPolicyComparison, Double>) in
                SummaryStatistics.median(rows.map { $0[keyPath: figure] }) ?? 0
            }
            let row = rows[0]
            return CedarPolicyComparison(
                policy: row.policy, cedarPolicy: row.cedarPolicy, requests: row.requests, allowed: row.allowed,
                denied: row.denied, cordonMedianNanoseconds: median(\.cordonMedianNanoseconds),
                cordonP99Nanoseconds: median(\.cordonP99Nanoseconds),
                cedarMedianNanoseconds: median(\.cedarMedianNanoseconds),
                cedarP99Nanoseconds: median(\.cedarP99Nanoseconds),
                cedarEngineMedianNanoseconds: median(\.cedarEngineMedianNanoseconds),
                cedarEngineP99Nanoseconds: median(\.cedarEngineP99Nanoseconds), medianRatio: median(\.medianRatio),
                p99Ratio: median(\.p99Ratio), engineMedianRatio: median(\.engineMedianRatio),
                runRatios: rows.map(\.medianRatio))
        }
        return .measured(version: version, repetitions: first.repetitions, policies: policies)
    }

    /// One target per policy: Cordon decides faster than Cedar, each run's Cedar / Cordon median.
    var summaryRecords: [SummaryRecord] {
        let baseline = "Cedar (cedarpy \(cedarpyVersion ?? "?")), same requests; value: Cedar ns / Cordon ns"
        guard status == "measured" else {
            return [
                .skipped(
                    benchmark: "policy", subject: "in-process evaluation vs Cedar", comparison: .above,
                    targetValue: 1, unit: "×", baseline: "Cedar (cedarpy)", reason: skipReason ?? "skipped")
            ]
        }
        return policies.map { row in
            let name = ((row.policy as NSString).lastPathComponent as NSString).deletingPathExtension
            return SummaryRecord(
                benchmark: "policy", subject: "in-process evaluation vs Cedar, \(name)",
                comparison: .above, targetValue: 1, unit: "×", baseline: baseline,
                values: row.runRatios.isEmpty ? [row.medianRatio] : row.runRatios)
        }
    }
}
