import ArgumentParser
import CordonFleet
import CordonFleetAdmin

/// `cordon fleet timestamp DIR`: what cron runs.
struct FleetTimestampCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timestamp",
        abstract: "Re-sign the timestamp (run it from cron, e.g. hourly, then upload).",
        discussion: """
            Machines refuse the repository once its timestamp expires (1 day by default). Snapshot, \
            targets and commands within a quarter of their validity of expiring are re-signed too.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument

    func run() async throws {
        var fleet = try workspace.open()
        let result = try fleet.resignTimestamp()
        for warning in result.warnings { Output.note("cordon: warning: \(warning)") }
        let renewed =
            result.renewed.isEmpty ? "" : "; renewed \(result.renewed.map(\.rawValue).joined(separator: ", "))"
        try Output.line("timestamp v\(result.version), expires \(TUFDate.format(result.expires))\(renewed)")
    }
}
