import ArgumentParser
import Foundation

/// `cordon-bench deaf-app` (hidden): an app that registers and subscribes, then never reads or
/// acknowledges anything, for `cordon-bench enforce`.
struct DeafApp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deaf-app", abstract: "An app that never acknowledges (for enforce).", shouldDisplay: false)

    @Option var socket: String
    @Option var appId: String

    func run() throws {
        let control = try VarlinkConnection(path: socket)
        let token = try control.call("io.cordon.App.Register", ["appId": appId])["token"] as? String ?? ""
        let subscription = try VarlinkConnection(path: socket)
        try subscription.send(
            try VarlinkConnection.encode(method: "io.cordon.App.Subscribe", parameters: ["token": token], more: true))
        while true { pause() }
    }

    /// Starts this binary as a deaf app.
    static func spawn(socket: String, appId: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = ["deaf-app", "--socket", socket, "--app-id", appId]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}
