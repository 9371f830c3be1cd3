import CordonAppStorage
import CordonProtocol
import CordonSecrets
import Foundation
import Testing

@testable import CordonKit

/// `storage.dataAccess` and selective wipe, through the SDK (`SecureStore`) and the agent
/// (`io.cordon.Storage`) side by side (docs/THREAT-MODEL.md, "App storage").
@Suite("Storage data-access modes and selective wipe", .timeLimit(.minutes(2)))
struct StorageModeTests {
    struct Fixture {
        let agent: TestAgent
        let client: CordonClient
        let app: CordonApp
        let events: EventRecorder
        let store: SecureStore

        /// `Get` over the app's own agent connection.
        func agentGet(_ name: String) async throws -> String {
            let reply = try await app.control.call(
                .storageGet, StorageRecordParameters(name: name), returning: StorageGetReply.self)
            return String(decoding: Data(base64Encoded: reply.value) ?? Data(), as: UTF8.self)
        }

        func agentPut(_ name: String, _ value: String) async throws {
            _ = try await app.control.call(
                .storagePut, StoragePutParameters(name: name, value: Data(value.utf8).base64EncodedString()),
                returning: NoParameters.self)
        }

        func waitFor(_ kind: EventKind) async throws {
            try await eventually("\(kind)") { events.events.contains { $0.kind == kind } }
        }

        func close() async {
            events.cancel()
            await app.close()
            await client.close()
        }
    }

    static func fixture(_ agent: TestAgent, dataAccess: String, appId: String = "com.example.notes") async throws
        -> Fixture
    {
        let admin = agent.directory + "/admin"
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try #"{"schema": "cordon.policy.v1", "storage": {"dataAccess": "\#(dataAccess)"}}"#
            .write(toFile: admin + "/storage.json", atomically: true, encoding: .utf8)
        let client = try await agent.client()
        _ = try await client.reloadPolicy()
        try await client.initialize(passcode: "1234")
        try await client.unlock(passcode: "1234")
        let app = try await agent.app(appId)
        let store = try SecureStore(app: app, dataDirectory: agent.paths.dataDirectory)
        return Fixture(agent: agent, client: client, app: app, events: EventRecorder(app.events), store: store)
    }

    @Test func whenUnlockedEveryCallFailsWhileLockedAndWorksAfterUnlock() async throws {
        try await withTestAgent(policies: true) { agent in
            let f = try await Self.fixture(agent, dataAccess: "whenUnlocked")
            try await f.store.put("sdk", Data("from the SDK".utf8))
            try await f.agentPut("agent", "from the agent")
            let key = try #require(f.app.keyState.key)
            try await f.client.lock()
            try await f.waitFor(.didLock)
            #expect(key.isZeroed, "the SDK zeroed its key on DidLock")
            let locked = CordonError.containerLocked(appId: "com.example.notes", state: "lockedKeyHeld")
            await #expect(throws: locked) { _ = try await f.store.get("sdk") }
            await #expect(throws: locked) { try await f.store.put("sdk", Data()) }
            await #expect(throws: locked) { _ = try await f.store.list() }
            await #expect(throws: locked) { _ = try await f.agentGet("agent") }
            await #expect(throws: locked) { try await f.agentPut("agent", "x") }
            try await f.client.unlock(passcode: "1234")
            // Both ways read both records: one format, one key.
            #expect(try await f.store.get("agent") == Data("from the agent".utf8))
            #expect(try await f.agentGet("sdk") == "from the SDK")
            await f.close()
        }
    }

    @Test func afterFirstUnlockWorksWhileLockedAndClosesOnRevocation() async throws {
        try await withTestAgent(policies: true) { agent in
            let f = try await Self.fixture(agent, dataAccess: "afterFirstUnlock")
            try await f.store.put("sdk", Data("kept".utf8))
            try await f.client.lock()
            try await f.waitFor(.didLock)
            #expect(try await f.store.get("sdk") == Data("kept".utf8))
            #expect(try await f.agentGet("sdk") == "kept")
            let key = try #require(f.app.keyState.key)
            try await f.client.logout()
            try await f.waitFor(.encryptionKeyUnavailable)
            #expect(key.isZeroed)
            let closed = CordonError.containerLocked(appId: "com.example.notes", state: "lockedNoKey")
            await #expect(throws: closed) { _ = try await f.store.get("sdk") }
            await #expect(throws: closed) { _ = try await f.agentGet("sdk") }
            await f.close()
        }
    }

    @Test func selectiveWipeLeavesTheOldCiphertextUnopenableAndOtherAppsUntouched() async throws {
        try await withTestAgent(policies: true) { agent in
            let f = try await Self.fixture(agent, dataAccess: "afterFirstUnlock")
            let mail = try await agent.app("com.example.mail")
            let mailEvents = EventRecorder(mail.events)
            let mailStore = try SecureStore(app: mail, dataDirectory: agent.paths.dataDirectory)
            try await mailStore.put("inbox", Data("mail's data".utf8))
            try await f.store.put("draft", Data("notes' data".utf8))
            let oldKey = try await f.app.secureKey()
            // Copy the notes file (and its WAL) aside, as a thief with the disk would.
            let path = f.store.path
            let copy = agent.directory + "/stolen.sqlite"
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await f.client.wipeApp("com.example.notes", passcode: "9999")
            }
            #expect(FileManager.default.fileExists(atPath: path), "a wrong passcode wipes nothing")
            try await f.client.wipeApp("com.example.notes", passcode: "1234")
            try await eventually("notes hears Wiped") {
                f.events.events.contains { $0.payload == .wiped(appId: "com.example.notes") }
            }
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            // The key the agent now derives for notes opens nothing of the copy.
            let newKey = try await f.app.secureKey()
            #expect(newKey.withUnsafeBytes { Array($0) } != oldKey.withUnsafeBytes { Array($0) })
            let stolenWithNewKey = AppStorage(path: copy, appId: "com.example.notes", appKey: newKey)
            #expect(try stolenWithNewKey.get(namespace: "default", name: "draft") == nil)
            #expect(try stolenWithNewKey.list(namespace: "default").isEmpty)
            // The copy itself is intact: only the old key, which is never derived again, opened it.
            let stolenWithOldKey = AppStorage(path: copy, appId: "com.example.notes", appKey: oldKey)
            #expect(try stolenWithOldKey.list(namespace: "default") == ["draft"])
            // Notes starts empty; mail's data still opens, and mail was not told anything.
            #expect(try await f.store.get("draft") == nil)
            #expect(try await mailStore.get("inbox") == Data("mail's data".utf8))
            #expect(!mailEvents.events.contains { $0.kind == .wiped })
            let audit = try await f.client.audit().filter { $0.action == "storage.wipe" }
            #expect(audit.map(\.outcome) == ["wiped"])
            #expect(audit.first?.appId == "com.example.notes")
            mailEvents.cancel()
            await mail.close()
            await f.close()
        }
    }
}
