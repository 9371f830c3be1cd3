import CordonKit
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@Suite("CordonApp against a running agent", .timeLimit(.minutes(2)))
struct CordonAppTests {
    /// The raw bytes of an app's current key.
    private func keyBytes(_ app: CordonApp) async throws -> [UInt8] {
        let key = try await app.key()
        return key.withUnsafeBytes { Array($0) }
    }

    @Test func connectRegistersAManagedApp() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            let app = try await agent.app("com.example.notes")
            #expect(app.appId == "com.example.notes")
            #expect(app.managed)
            let events = EventRecorder(app.events)
            let snapshot = try #require(try await events.waitFor(count: 1).first)
            #expect(snapshot.kind == .state)
            let apps = try await client.apps()
            #expect(apps.count == 1)
            let info = try #require(apps.first)
            #expect(info.appId == "com.example.notes")
            #expect(info.managed)
            #expect(info.subscribed)
            #expect(info.compliance == .compliant)
            #expect(info.pid == Int(getpid()))
            #expect(try await client.status().apps == 1)
            events.cancel()
            await app.close()
            try await eventually("the app to be gone") { try await client.apps().isEmpty }
            await client.close()
        }
    }

    @Test func invalidAppIdIsRefused() async throws {
        try await withTestAgent { agent in
            let error = await #expect(throws: CordonError.self) { _ = try await agent.app("bad app id!") }
            guard case .invalidAppId(let appId, _) = error else {
                Issue.record("expected invalidAppId, got \(String(describing: error))")
                return
            }
            #expect(appId == "bad app id!")
        }
    }

    @Test func keyOnlyWhileTheKeyIsAvailable() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            await #expect(throws: CordonError.keyUnavailable(state: "lockedNoKey")) { _ = try await app.key() }
            try await client.unlock(passcode: "1234")
            let key = try await keyBytes(app)
            #expect(key.count == 32)
            // Locked with the key held: background work may go on.
            try await client.lock()
            #expect(try await keyBytes(app) == key)
            try await client.logout()
            await #expect(throws: CordonError.keyUnavailable(state: "lockedNoKey")) { _ = try await app.key() }
            await app.close()
            await client.close()
        }
    }

    @Test func sameAppIdGetsTheSameKeyAcrossLocksAndLogouts() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let key = try await keyBytes(app)
            try await client.lock()
            try await app.unlockWithinGrace()
            #expect(try await keyBytes(app) == key)
            try await client.logout()
            try await client.unlock(passcode: "1234")
            #expect(try await keyBytes(app) == key)
            // One live registration per managed app: a second is refused while the first lives, and
            // a new registration once it is gone gets the same key.
            await #expect(throws: CordonError.appIdInUse(appId: "com.example.notes", pid: Int(getpid()))) {
                _ = try await agent.app("com.example.notes")
            }
            await app.close()
            var registered: CordonApp?
            try await eventually("the first registration is gone") {
                registered = try? await agent.app("com.example.notes")
                return registered != nil
            }
            let again = try #require(registered)
            #expect(try await keyBytes(again) == key)
            await again.close()
            await client.close()
        }
    }

    @Test func differentAppIdsGetDifferentKeys() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let notes = try await agent.app("com.example.notes")
            let mail = try await agent.app("com.example.mail")
            let notesKey = try await keyBytes(notes)
            let mailKey = try await keyBytes(mail)
            #expect(notesKey.count == 32)
            #expect(mailKey.count == 32)
            #expect(notesKey != mailKey)
            await notes.close()
            await mail.close()
            await client.close()
        }
    }

    @Test func logoutAsksForAnAcknowledgement() async throws {
        let settings = PolicySettingValues.with { $0[PolicyKeys.Lock.ackDeadlineMs] = 600_000 }
        try await withTestAgent(settings: settings) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let events = EventRecorder(app.events)
            try await events.waitFor(count: 1)
            try await client.logout()
            let seen = try await events.waitFor(count: 3)
            #expect(seen.map(\.kind) == [.state, .didLock, .encryptionKeyUnavailable])
            let revocation = try #require(seen.last)
            #expect(revocation.reason == .logout)
            #expect(!revocation.keyAvailable)
            let deadline = try #require(revocation.ackDeadline)
            #expect(deadline > revocation.time)

            let pending = try #require(try await client.apps().first)
            #expect(pending.compliance == .pending)
            #expect(pending.pendingSeq == revocation.seq)
            try await app.acknowledge(revocation, status: .halted)
            let compliant = try #require(try await client.apps().first)
            #expect(compliant.compliance == .compliant)
            #expect(compliant.pendingSeq == nil)
            #expect(compliant.lastAckSeq == revocation.seq)
            events.cancel()
            await app.close()
            await client.close()
        }
    }

    @Test func acknowledgingAnUnknownSequenceFails() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let bogus = CordonEvent(
                seq: 42, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .logout, time: 0,
                state: .lockedNoKey)
            await #expect(throws: CordonError.unknownSequence(seq: 42)) {
                try await app.acknowledge(bogus, status: .halted)
            }
            await app.close()
            await client.close()
        }
    }

    @Test func missedDeadlineMakesTheAppOverdue() async throws {
        let settings = PolicySettingValues.with { $0[PolicyKeys.Lock.ackDeadlineMs] = 100 }
        try await withTestAgent(settings: settings) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let events = EventRecorder(app.events)
            try await events.waitFor(count: 1)
            try await client.logout()
            try await eventually("the app to be overdue") {
                try await client.apps().first?.compliance == .overdue
            }
            // Acknowledging late still clears it.
            let revocation = try #require(try await events.waitFor(count: 3).last)
            try await app.acknowledge(revocation, status: .halted)
            #expect(try await client.apps().first?.compliance == .compliant)
            events.cancel()
            await app.close()
            await client.close()
        }
    }

    @Test func keyReturningClearsThePendingAcknowledgement() async throws {
        let settings = PolicySettingValues.with { $0[PolicyKeys.Lock.ackDeadlineMs] = 600_000 }
        try await withTestAgent(settings: settings) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            try await client.logout()
            #expect(try await client.apps().first?.compliance == .pending)
            try await client.unlock(passcode: "1234")
            #expect(try await client.apps().first?.compliance == .compliant)
            await app.close()
            await client.close()
        }
    }

    @Test func stoppingTheAgentEndsTheAppsEvents() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let app = try await agent.app("com.example.notes")
            let events = EventRecorder(app.events)
            let snapshot = try #require(try await events.waitFor(count: 1).first)
            #expect(snapshot.state == .unlocked)
            try await agent.stop()
            let seen = try await events.waitUntilFinished()
            let last = try #require(seen.last)
            #expect(last.kind == .encryptionKeyUnavailable)
            #expect(last.reason == .agentUnavailable)
            #expect(!last.keyAvailable)
            let between = seen.dropFirst().dropLast()
            let reasons = Set(between.map(\.reason))
            #expect(reasons.isSubset(of: [.shutdown]), "\(between)")
            let kinds = Set(between.map(\.kind))
            #expect(kinds.isSubset(of: [.didLock, .encryptionKeyUnavailable]), "\(between)")
            await #expect(throws: (any Error).self) { _ = try await app.key() }
            await app.close()
            await client.close()
        }
    }
}
