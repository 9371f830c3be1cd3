import CordonKit
import CordonLocking
import CordonProtocol
import Foundation
import Testing

@testable import CordonRun

/// `TunnelSet` in a runtime directory of the test's own (docs/ARCHITECTURE.md, "Pinned channel"):
/// what it refuses before any listener binds. (A bind sets the process's umask for a moment, which
/// would reach files other tests of this process create at that moment: the listeners themselves
/// are exercised by `TunnelEndToEndTests`, through `cordon run` in a process of its own.)
@Suite struct TunnelSetTests {
    /// The notes a run tells the user.
    final class Notes: Sendable {
        private let lines = Locked<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var sink: RunNote { { line in self.lines.withLock { $0.append(line) } } }
    }

    let root: String
    let notes = Notes()

    init() throws {
        root = "/tmp/cordon-run-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
    }

    var environment: [String: String] { ["CORDON_RUNTIME_DIR": root + "/rt"] }
    var runDirectory: String { root + "/rt/tunnels/run-\(getpid())" }

    func start(_ specs: [String], available: Bool? = true) async throws -> TunnelSet {
        try await TunnelSet.start(
            specs.map { try Tunnel(parsing: $0) }, environment: environment, upstream: TunnelUpstream(),
            gate: ChannelGate(appId: "com.example.notes", available: available), note: notes.sink)
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test func noTunnelsMakeNoDirectory() async throws {
        let set = try await start([])
        #expect(set.directory == nil)
        #expect(set.environment.isEmpty)
        #expect(Self.mode(root + "/rt") == nil)
    }

    @Test func aDirectoryOthersCanReachIsRefused() async throws {
        try FileManager.default.createDirectory(atPath: root + "/rt/tunnels", withIntermediateDirectories: true)
        chmod(root + "/rt", 0o700)
        chmod(root + "/rt/tunnels", 0o755)
        await #expect(
            throws: ErrorText(
                "--tunnel: \(root)/rt/tunnels is not a private directory of this user's (mode 0700, owned by uid \(getuid()))",
                hint: "remove it or set XDG_RUNTIME_DIR to a directory of your own")
        ) { try await start(["api=https://api.example.com"]) }
    }

    @Test func aSocketPathTooLongIsAUsageFailure() async throws {
        let long = root + "/" + String(repeating: "d", count: 60)
        await #expect(throws: ErrorText.self) {
            try await TunnelSet.start(
                [try Tunnel(parsing: "api=https://api.example.com")], environment: ["CORDON_RUNTIME_DIR": long],
                upstream: TunnelUpstream(), gate: ChannelGate(appId: "com.example.notes"), note: notes.sink)
        }
        #expect(Self.mode(long + "/tunnels/run-\(getpid())") == nil, "the run's directory is removed again")
    }
}
