import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

@Suite("SecureStore against a running agent", .timeLimit(.minutes(2)))
struct SecureStoreTests {
    @Test func putGetListDeleteInTheAppsOwnFile() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let store = try SecureStore(app: app, dataDirectory: agent.paths.dataDirectory)
            #expect(try await store.get("draft") == nil)
            try await store.put("draft", Data("hello".utf8))
            try await store.put("draft-2", Data("world".utf8))
            #expect(try await store.get("draft") == Data("hello".utf8))
            #expect(try await store.list(prefix: "draft") == ["draft", "draft-2"])
            #expect(try await store.delete("draft"))
            #expect(try await store.list() == ["draft-2"])
            #expect(store.path == agent.paths.dataDirectory + "/storage/com.example.notes.sqlite")
            // Another namespace of the same app is separate.
            let other = try SecureStore(app: app, namespace: "settings", dataDirectory: agent.paths.dataDirectory)
            #expect(try await other.list().isEmpty)
            await #expect(throws: CordonError.invalidRecordName(field: "name", reason: "it contains a NUL byte")) {
                try await store.put("a\u{0}b", Data())
            }
            await #expect(
                throws: CordonError.valueTooLarge(size: SecureStore.maxValueBytes + 1, limit: SecureStore.maxValueBytes)
            ) {
                try await store.put("big", Data(count: SecureStore.maxValueBytes + 1))
            }
            #expect(try await store.get("draft-2") == Data("world".utf8))
            await app.close()
            await client.close()
        }
    }

    @Test func revocationZeroesTheKeyAndClosesTheStore() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let events = EventRecorder(app.events)
            let store = try SecureStore(app: app, dataDirectory: agent.paths.dataDirectory)
            try await store.put("secret", Data("value".utf8))
            let key = try #require(app.keyState.key)
            #expect(!key.isZeroed)
            try await client.logout()
            try await eventually("EncryptionKeyUnavailable") {
                events.events.contains { $0.kind == .encryptionKeyUnavailable }
            }
            // The events task revoked before the app heard the event.
            #expect(key.isZeroed)
            #expect(app.keyState.key == nil)
            await #expect(throws: CordonError.containerLocked(appId: "com.example.notes", state: "lockedNoKey")) {
                _ = try await store.get("secret")
            }
            try await client.unlock(passcode: "1234")
            #expect(try await store.get("secret") == Data("value".utf8))
            events.cancel()
            await app.close()
            await client.close()
        }
    }
}
