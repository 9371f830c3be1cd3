import CordonFleet

/// How the CLI shows a verified machine report (`verify-report`, `reports`): the lines under its
/// heading, each indented two spaces.
enum FleetReportLines {
    static func lines(_ report: FleetReport) -> [String] {
        var lines: [String] = []
        let versions = report.versions.sorted { $0.key < $1.key }.map { "\($0.key) v\($0.value)" }
        lines.append("  versions: \(versions.joined(separator: ", "))")
        for (name, hash) in report.policies.sorted(by: { $0.key < $1.key }) {
            lines.append("  policy \(name) sha256 \(hash)")
        }
        lines.append("  last command: \(report.lastCommand.map { "counter \($0)" } ?? "none")")
        if let error = report.lastError { lines.append("  last error: \(error)") }
        for result in report.posture {
            lines.append("  posture \(result.check.rawValue): \(result.status.rawValue) (\(result.evidence))")
        }
        return lines
    }
}
