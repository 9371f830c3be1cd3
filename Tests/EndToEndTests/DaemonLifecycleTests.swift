import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The daemon process: graceful shutdown, its socket, and the service manager protocol.
@Suite struct DaemonLifecycleTests {
    @Test func sigtermRevokesAndTellsEveryApp() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.shutdown", socketPath: daemon.socketPath)
        var events = app.events.makeAsyncIterator()
        let first = try #require(await events.next())
        #expect(first.kind == .state && first.keyAvailable)

        #expect(try await daemon.stop(signal: SIGTERM) == 0)
        var kinds: [(EventKind, EventReason)] = []
        while let event = await events.next() { kinds.append((event.kind, event.reason)) }
        #expect(kinds.map(\.0) == [.didLock, .encryptionKeyUnavailable, .encryptionKeyUnavailable])
        #expect(kinds.map(\.1) == [.shutdown, .shutdown, .agentUnavailable])
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket is removed")
        #expect(daemon.log.contains("key discarded"))
    }

    @Test func liveSocketIsNeverStolen() async throws {
        let first = try await DaemonProcess.started()
        defer { first.cleanUp() }
        let second = try DaemonProcess(root: first.root)
        #expect(try await second.stop(signal: 0) == 1, "the second daemon refuses to start")
        #expect(second.log.contains("another agent is already listening"))
        let client = try await first.client()
        #expect(try await client.status().state == .uninitialized)
        try await first.stop()
    }

    @Test func staleSocketIsReplaced() async throws {
        let first = try await DaemonProcess.started()
        defer { first.cleanUp() }
        try await first.stop(signal: SIGKILL)
        #expect(FileManager.default.fileExists(atPath: first.socketPath), "kill -9 leaves the socket behind")
        let second = try await DaemonProcess.started(root: first.root)
        let client = try await second.client()
        #expect(try await client.status().state == .uninitialized)
        let attributes = try FileManager.default.attributesOfItem(atPath: second.socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: second.runtimeDirectory)
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        try await second.stop()
    }

    static let notifyListener = """
        import json, os, socket, sys
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        open(path + ".ready", "w").close()
        s.settimeout(60)
        messages = []
        while not any("STOPPING=1" in m for m in messages):
            messages.append(s.recv(4096).decode())
        print(json.dumps(messages))
        """

    @Test func notifiesTheServiceManager() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let script = root.appending("notify.py")
        try Self.notifyListener.write(toFile: script, atomically: true, encoding: .utf8)
        let notifySocket = root.appending("notify.sock")
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        async let listener = runCommand(URL(fileURLWithPath: "/usr/bin/env"), [python, script, notifySocket])
        try await eventually("the listener is bound") {
            FileManager.default.fileExists(atPath: notifySocket + ".ready")
        }
        let daemon = try await DaemonProcess.started(root: root, environment: ["NOTIFY_SOCKET": notifySocket])
        try await daemon.stop()
        let result = try await listener
        let messages = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String]
        let all = try #require(messages).joined(separator: "\n")
        #expect(all.contains("READY=1"))
        #expect(all.contains("STATUS=state: uninitialized"))
        #expect(all.contains("STOPPING=1"))
    }
}
