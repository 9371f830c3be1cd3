/// One target of one benchmark, as `cordon-bench --summary` appends it (one JSON line): what is
/// measured against which baseline, the target, each run's value, and what they come to.
///
/// The median, spread, runs met and status are derived from the values and the target (and
/// derived again when a line is read), so a record cannot contradict its own runs. A record
/// without values is a target that was not measured; `note` says why.
public struct SummaryRecord: Equatable, Sendable {
    /// The subcommand that measured it (`rtt`, `fanout`, `memory` …).
    public let benchmark: String
    /// What is measured, e.g. `GetStatus round trip, one-cpu`.
    public let subject: String
    /// How the median is held to `targetValue`.
    public let comparison: SummaryComparison
    public let targetValue: Double
    /// A bound every run must also keep (by the same comparison), where the target sets one.
    public let everyRunLimit: Double?
    /// The values' unit as printed after them: `×` for a ratio to the baseline, `MB`, `ms`.
    public let unit: String
    /// What the values are measured against in the same run; nil for an absolute target.
    public let baseline: String?
    /// One value per run.
    public let values: [Double]
    /// Why the target was not measured, or a remark on how it was.
    public let note: String?

    public let median: Double?
    public let spread: (low: Double, high: Double)?
    /// How many runs alone meet the target.
    public let runsMet: Int
    public let status: SummaryStatus

    /// A measured target (or, with no values, a skipped one).
    public init(
        benchmark: String, subject: String, comparison: SummaryComparison, targetValue: Double,
        everyRunLimit: Double? = nil, unit: String, baseline: String?, values: [Double], note: String? = nil
    ) {
        self.benchmark = benchmark
        self.subject = subject
        self.comparison = comparison
        self.targetValue = targetValue
        self.everyRunLimit = everyRunLimit
        self.unit = unit
        self.baseline = baseline
        self.values = values
        self.note = note
        median = SummaryStatistics.median(values)
        spread = SummaryStatistics.spread(values)
        runsMet = values.filter { comparison.holds($0, targetValue) }.count
        if let median {
            let everyRun = everyRunLimit.map { limit in values.allSatisfy { comparison.holds($0, limit) } } ?? true
            status = comparison.holds(median, targetValue) && everyRun ? .met : .notMet
        } else {
            status = .skipped
        }
    }

    /// A target that was not measured, and why.
    public static func skipped(
        benchmark: String, subject: String, comparison: SummaryComparison, targetValue: Double,
        everyRunLimit: Double? = nil, unit: String, baseline: String?, reason: String
    ) -> SummaryRecord {
        SummaryRecord(
            benchmark: benchmark, subject: subject, comparison: comparison, targetValue: targetValue,
            everyRunLimit: everyRunLimit, unit: unit, baseline: baseline, values: [], note: reason)
    }

    /// The target as printed: `median ≤ 1.5×`, with `, every run ≤ 0.5×` where it sets that too.
    public var target: String {
        var text = "median \(comparison.symbol) \(SummaryFormat.bound(targetValue, unit: unit))"
        if let everyRunLimit {
            text += ", every run \(comparison.symbol) \(SummaryFormat.bound(everyRunLimit, unit: unit))"
        }
        return text
    }

    public static func == (left: SummaryRecord, right: SummaryRecord) -> Bool {
        left.benchmark == right.benchmark && left.subject == right.subject && left.comparison == right.comparison
            && left.targetValue == right.targetValue && left.everyRunLimit == right.everyRunLimit
            && left.unit == right.unit && left.baseline == right.baseline && left.values == right.values
            && left.note == right.note
    }
}
