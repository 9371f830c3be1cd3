import CordonBenchSummary

extension RTTReport {
    /// What the agent's replies are measured against.
    static let baseline = "separate-process C echo, same reply size"

    /// One record per placement with a target: each run's median ratio agent / echo.
    var summaryRecords: [SummaryRecord] {
        placements.compactMap { placement in
            placement.target.map { target in
                SummaryRecord(
                    benchmark: "rtt", subject: "\(method) round trip, \(placement.placement.rawValue)",
                    comparison: .atMost, targetValue: target, unit: "×", baseline: Self.baseline,
                    values: placement.runs.map(\.ratio))
            }
        }
    }

    /// The records of a method that was not measured, for each placement with a target.
    static func skippedRecords(method: String, placements: [RoundTripPlacement], reason: String) -> [SummaryRecord] {
        placements.compactMap { placement in
            placement.target(method: method).map { target in
                SummaryRecord.skipped(
                    benchmark: "rtt", subject: "\(method) round trip, \(placement.rawValue)", comparison: .atMost,
                    targetValue: target, unit: "×", baseline: baseline, reason: reason)
            }
        }
    }
}
