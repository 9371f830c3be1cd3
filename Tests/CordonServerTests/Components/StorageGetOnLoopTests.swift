import CordonAppStorage
import CordonLocking
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `Storage.Get` on the loop (issue #31): a record read before is answered synchronously from the
/// held sealed record; a write through the agent or by the app's own `SecureStore` (another
/// connection to the same file) is never hidden by what is held; a lock drops it all.
@Suite struct StorageGetOnLoopTests {
    typealias Fixture = StorageComponentTests.Fixture

    /// `Get` of `name`: its value (decoded) or error, and whether it was answered synchronously.
    static func get(_ name: String, in fixture: Fixture) async throws -> (String, Bool) {
        let synchronous = Locked(false)
        let reply = try await fixture.call(.storageGet, ["name": .string(name)]) { storage, call in
            let outcome = try storage.serve(.get, call)
            if case .reply = outcome { synchronous.withLock { $0 = true } }
            return outcome
        }
        let answer: String
        if case .string(let encoded) = reply["parameters"]?["value"], let data = Data(base64Encoded: encoded) {
            answer = String(decoding: data, as: UTF8.self)
        } else if case .string(let error) = reply["error"] {
            answer = "error " + error
        } else {
            answer = "no answer: \(reply)"
        }
        return (answer, synchronous.withLock { $0 })
    }

    static func put(_ name: String, _ value: String, in fixture: Fixture) async throws {
        let reply = try await fixture.call(
            .storagePut, ["name": .string(name), "value": .string(Data(value.utf8).base64EncodedString())]
        ) { try $0.serve(.put, $1) }
        #expect(reply["error"] == nil, "\(reply)")
    }

    @Test func aRecordReadBeforeIsAnsweredOnTheLoop() async throws {
        try await StorageComponentTests.with { fixture in
            try await Self.put("agenda", "first", in: fixture)
            var answers: [(String, Bool)] = []
            for _ in 0..<4 { answers.append(try await Self.get("agenda", in: fixture)) }
            #expect(answers.map(\.0) == Array(repeating: "first", count: 4))
            // The first read opens the probe, the second keeps the record, the rest are held.
            #expect(answers.map(\.1) == [false, false, true, true])
            #expect(try await Self.get("missing", in: fixture).0 == "error io.cordon.Storage.NotFound")
        }
    }

    @Test func aWriteThroughTheAgentIsNeverHidden() async throws {
        try await StorageComponentTests.with { fixture in
            try await Self.put("agenda", "first", in: fixture)
            for _ in 0..<3 { _ = try await Self.get("agenda", in: fixture) }
            try await Self.put("agenda", "second", in: fixture)
            #expect(try await Self.get("agenda", in: fixture) == ("second", false))
        }
    }

    @Test func aWriteByTheAppsOwnStoreIsNeverHidden() async throws {
        try await StorageComponentTests.with { fixture in
            try await Self.put("agenda", "first", in: fixture)
            for _ in 0..<3 { _ = try await Self.get("agenda", in: fixture) }
            #expect(try await Self.get("agenda", in: fixture) == ("first", true))
            // The app's SecureStore: another connection to the same file, with the app's key.
            try await fixture.run { host, _, _ throws in
                let path = AppStorage.path(
                    dataDirectory: host.configuration.paths.dataDirectory, appId: "com.example.notes")
                let key = try #require(host.appKey(for: "com.example.notes"))
                let app = AppStorage(path: path, appId: "com.example.notes", appKey: key)
                defer { app.close() }
                try app.put(namespace: AppStorage.defaultNamespace, name: "agenda", value: Array("from the app".utf8))
            }
            #expect(try await Self.get("agenda", in: fixture) == ("from the app", false))
            _ = try await Self.get("agenda", in: fixture)
            #expect(try await Self.get("agenda", in: fixture) == ("from the app", true))
        }
    }

    @Test func aLockDropsWhatIsHeld() async throws {
        try await StorageComponentTests.with { fixture in
            try await Self.put("agenda", "first", in: fixture)
            for _ in 0..<3 { _ = try await Self.get("agenda", in: fixture) }
            let held = try await fixture.run { _, storage, _ in storage.caches["com.example.notes"]?.count }
            #expect(held == 1)
            try await fixture.run { _, storage, _ in
                storage.observe(
                    CordonEvent(
                        seq: 2, payload: .encryptionKeyUnavailable(ackDeadline: nil, posture: nil), reason: .logout,
                        time: 0, state: .lockedNoKey))
            }
            #expect(try await fixture.run { _, storage, _ in storage.caches.isEmpty })
        }
    }
}
