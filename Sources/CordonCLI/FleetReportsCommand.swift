import ArgumentParser
import CordonFleet
import CordonFleetAdmin

/// `cordon fleet reports DIR --nats URL [--device ID]`: the fleet's compliance view.
struct FleetReportsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reports",
        abstract: "Show every machine's last signed report, as the push channel's reports stream keeps it.",
        discussion: """
            Reads CORDON_FLEET_REPORTS with the workspace's NATS key (keys/push.nk) and verifies each \
            report against the device id of the subject it was kept on: the NATS server is not \
            trusted, so a report another key signed is shown as refused, and the exit status is 1.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument
    @OptionGroup var nats: FleetNATSArguments
    @Option(help: "Only this machine's report (its device id, 64 hex digits).") var device: String?

    func run() async throws {
        let entries = try FleetReports.read(
            workspace: workspace.directory, servers: nats.servers, seedFile: nats.seedFile, caFile: nats.caFile,
            device: device)
        var refused = 0
        for entry in entries {
            guard let report = entry.report else {
                refused += 1
                try Output.line("\(entry.device): refused: \(entry.refusal ?? "not a report")")
                continue
            }
            try Output.line("\(entry.device): valid, \(TUFDate.format(report.time))")
            for line in FleetReportLines.lines(report) { try Output.line(line) }
        }
        try Output.line("\(entries.count) machine(s), \(refused) refused")
        if refused > 0 {
            throw CLIError(
                "\(refused) kept report(s) did not verify",
                hint: "a report must be signed by the device key of the machine whose subject it is kept on")
        }
    }
}
