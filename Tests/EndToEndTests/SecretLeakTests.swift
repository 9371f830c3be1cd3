import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Passcodes and key bytes never reach a log line, even at trace level, nor linger in the
/// agent's ordinary heap.
@Suite struct SecretLeakTests {
    /// An app asks for its key again and again; afterwards no base64 copy of it is left in
    /// cordond's memory (the reply is encoded from locked memory straight into a frame that is
    /// zeroed once written).
    @Test func getKeyLeavesNoBase64CopyInTheAgentsMemory() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.leak", socketPath: daemon.socketPath)
        let key = try await app.key()
        for _ in 0..<50 { _ = try await app.key() }
        // Other traffic reuses the heap in between, as it would in a running agent.
        for _ in 0..<20 { _ = try await client.status() }
        let base64 = Array(key.withUnsafeBytes { Data($0) }.base64EncodedString().utf8)
        let copies = try ProcessMemory.occurrences(of: base64, in: daemon.pid)
        #expect(copies == 0, "\(copies) base64 copies of the app key in cordond's memory")
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func passcodeAndKeyNeverLogged() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let passcode = "Zebra-Quartz-7731"
        let wrong = "Wrong-Guess-4409"
        let changed = "Otter-Basalt-9902"
        let client = try await daemon.client()
        try await client.initialize(passcode: passcode)
        await #expect(throws: CordonError.self) { try await client.unlock(passcode: wrong) }
        try await client.unlock(passcode: passcode)
        let app = try await CordonApp.connect(appId: "com.example.leak", socketPath: daemon.socketPath)
        let key = try await app.key()
        try await client.changePasscode(old: passcode, new: changed)
        try await client.logout()
        await app.close()
        try await daemon.stop()

        let log = daemon.log
        #expect(log.contains("event"), "the trace log was captured")
        for secret in [passcode, wrong, changed] {
            #expect(!log.contains(secret), "a passcode appears in the log")
        }
        let keyBytes = key.withUnsafeBytes { Data($0) }
        #expect(!log.contains(keyBytes.base64EncodedString()), "the app key (base64) appears in the log")
        let hex = keyBytes.map { String(format: "%02x", $0) }.joined()
        #expect(!log.lowercased().contains(hex), "the app key (hex) appears in the log")
        let logData = try Data(contentsOf: URL(fileURLWithPath: daemon.logPath))
        #expect(logData.range(of: keyBytes) == nil, "raw key bytes appear in the log")
    }
}
