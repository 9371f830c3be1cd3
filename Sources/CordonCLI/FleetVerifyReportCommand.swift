import ArgumentParser
import CordonFleet
import Foundation

/// `cordon fleet verify-report FILE… [--device ID]`: checks machines' signed reports.
struct FleetVerifyReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-report",
        abstract: "Verify machines' signed reports (report.json, or what they PUT to reportURL) and show them.",
        discussion: """
            A report is signed by the machine's device key; the device id is SHA-256 of the key the \
            report carries, so a valid report proves which machine made it. With --device the report \
            must be that machine's.
            """)

    @Argument(help: ArgumentHelp("Report files.", valueName: "file")) var files: [String]
    @Option(help: "The device id the report must be from (64 hex digits).") var device: String?

    func run() async throws {
        var failed = false
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError("cannot read \(path)", hint: "give the path of a report file")
            }
            let report: FleetReport
            do {
                report = try FleetReport.verify(Array(data), device: device)
            } catch {
                failed = true
                FileHandle.standardError.write(Data("cordon: \(path): not a valid report: \(error)\n".utf8))
                continue
            }
            try Output.line("\(path): valid, device \(report.device), \(TUFDate.format(report.time))")
            for line in FleetReportLines.lines(report) { try Output.line(line) }
        }
        if failed {
            throw CLIError(
                "a report did not verify", hint: "a report must be signed by the device key of the machine it names")
        }
    }
}
