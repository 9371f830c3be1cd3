import Foundation
import Testing

/// The `SecureFile` example (examples/files, `cordon-files`) run as the user: an app that keeps
/// its files with CordonKit's `SecureFile`, driven one command line at a time on its standard
/// input (`write`, `stream`, `read`, `recipient`), saying what each did and each event it heard.
struct FilesApp: Sendable {
    let command: SpawnedCommand
    /// What it has said so far.
    let read: @Sendable () -> String
    var pid: Int32 { command.pid }

    /// Sends it one command line.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(command.stdin, $0.baseAddress, $0.count) }
    }

    /// Waits until it has said `text` (within a line starting `[files] `).
    func waitFor(_ text: String) async throws {
        try await eventually("the files app says \(text)") { read().contains("[files] \(text)") }
    }

    /// Kills it and reaps it.
    func stop() {
        kill(command.pid, SIGKILL)
        _ = command.finish(input: nil)
    }
}

extension UserAgent {
    /// Starts the `SecureFile` example as the user, registered as `appId`, writing what it says
    /// to `files.out` in the user's directory, and waits until it has registered; the caller
    /// stops it (``FilesApp/stop()``).
    func startFiles(appId: String = "com.example.notes") async throws -> FilesApp {
        let output = home.appending("files.out")
        let command =
            Self.asUser + ["/bin/sh", "-c", "exec \"$0\" \"$@\" > \"\(output)\" 2>&1", Binaries.files.path]
            + ["--app-id", appId, "--socket", socketPath]
        let spawned = try SpawnedCommand(
            path: command[0], arguments: Array(command.dropFirst()), environment: userEnvironment)
        let app = FilesApp(command: spawned) { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        do {
            try await app.waitFor("registered as \(appId)")
        } catch {
            app.stop()
            throw error
        }
        return app
    }
}
