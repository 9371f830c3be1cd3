import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon apps`: the registered apps.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the registered apps and whether they complied with the last event.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the apps as a JSON array (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let apps = try await client.apps()
        await client.close()
        if json {
            try Output.line(try Output.json(apps))
            return
        }
        guard !apps.isEmpty else {
            try Output.line("no apps are registered")
            return
        }
        let header = ["APP ID", "PID", "MANAGED", "SUBSCRIBED", "COMPLIANCE", "PROCESS", "EXECUTABLE"]
        let rows = apps.map { app in
            [
                app.appId, "\(app.pid)", Format.yesNo(app.managed), Format.yesNo(app.subscribed),
                Self.compliance(app), app.processState?.rawValue ?? "-", app.executable,
            ]
        }
        for line in Format.table([header] + rows) { try Output.line(line) }
    }

    /// The compliance, with how a frozen app is frozen and the resumes the agent undid:
    /// `frozen (cgroup)`, `frozen (signals, 1 resume undone)`.
    static func compliance(_ app: AppInfo) -> String {
        guard let method = app.freezeMethod else { return app.compliance.rawValue }
        let resumes = app.resumesUndone ?? 0
        let undone = resumes == 0 ? "" : ", \(resumes) resume\(resumes == 1 ? "" : "s") undone"
        return "\(app.compliance.rawValue) (\(method.rawValue)\(undone))"
    }
}
