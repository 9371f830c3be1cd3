import Foundation

/// A pseudo-terminal held open by a helper process, standing for the terminal of the user's
/// session (Glibc's module map hides `posix_openpt`).
final class PseudoTerminal: Sendable {
    let holder: LineReader
    /// The terminal's path, e.g. `/dev/pts/3`.
    let name: String

    static let script = "import os, signal; m, s = os.openpty(); print(os.ttyname(s), flush=True); signal.pause()"

    /// With `user`, the terminal is the test user's (``TestUser``): opened by a helper run as it,
    /// as the terminal of that user's session is.
    init(user: Bool = false) async throws {
        let command = (user ? TestUser.asUser : []) + ["/usr/bin/python3", "-c", Self.script]
        holder = try LineReader(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        let holder = self.holder
        try await eventually("the terminal is open") { !holder.snapshot.isEmpty }
        name = holder.snapshot[0]
    }

    /// Closes the terminal (the test runner's blocked signal mask is inherited: SIGKILL it is).
    func close() {
        guard holder.process.isRunning else { return }
        kill(holder.process.processIdentifier, SIGKILL)
        holder.process.waitUntilExit()
    }
}
