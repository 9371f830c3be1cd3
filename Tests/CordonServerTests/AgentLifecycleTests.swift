import CordonKit
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Testing

@Suite("Agent lifecycle over the socket", .timeLimit(.minutes(2)))
struct AgentLifecycleTests {
    @Test func freshAgentIsUninitialized() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            let status = try await client.status()
            #expect(status.state == .uninitialized)
            #expect(status.seq == 0)
            #expect(status.failedAttempts == 0)
            #expect(status.apps == 0)
            #expect(status.insecureKDF)
            await #expect(throws: CordonError.notInitialized) { try await client.unlock(passcode: "1234") }
            await #expect(throws: CordonError.notInitialized) { try await client.lock() }
            await client.close()
        }
    }

    @Test func initializeLeavesTheContainerLockedWithoutKey() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            #expect(try await client.status().state == .lockedNoKey)
            await #expect(throws: CordonError.alreadyInitialized) { try await client.initialize(passcode: "5678") }
            await client.close()
        }
    }

    @Test func shortPasscodeIsRefused() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            let error = await #expect(throws: CordonError.self) { try await client.initialize(passcode: "12") }
            guard case .invalidPasscode = error else {
                Issue.record("expected invalidPasscode, got \(String(describing: error))")
                return
            }
            #expect(try await client.status().state == .uninitialized)
            await client.close()
        }
    }

    @Test func wrongThenRightPasscode() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "0000")
            }
            #expect(try await client.status().failedAttempts == 1)
            try await client.unlock(passcode: "1234")
            let status = try await client.status()
            #expect(status.state == .unlocked)
            #expect(status.failedAttempts == 0)
            await client.close()
        }
    }

    @Test func lockKeepsTheKeyAndGraceUnlocksWithoutPasscode() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            try await client.lock()
            #expect(try await client.status().state == .lockedKeyHeld)
            // Within the grace only a verified managed app unlocks without the passcode.
            await #expect(throws: CordonError.passcodeRequired) { try await client.unlock(passcode: nil) }
            let app = try await agent.app("com.example.notes")
            #expect(try await app.requestUnlock() == false, "within the grace it unlocks without a prompt")
            #expect(try await client.status().state == .unlocked)
            await app.close()
            await client.close()
        }
    }

    @Test func logoutDiscardsTheKey() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            try await client.logout()
            #expect(try await client.status().state == .lockedNoKey)
            await #expect(throws: CordonError.passcodeRequired) { try await client.unlock(passcode: nil) }
            try await client.unlock(passcode: "1234")
            #expect(try await client.status().state == .unlocked)
            await client.close()
        }
    }

    @Test func changePasscodeReplacesTheOldOne() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.changePasscode(old: "9999", new: "5678")
            }
            let error = await #expect(throws: CordonError.self) {
                try await client.changePasscode(old: "1234", new: "56")
            }
            guard case .invalidPasscode = error else {
                Issue.record("expected invalidPasscode, got \(String(describing: error))")
                return
            }
            try await client.changePasscode(old: "1234", new: "5678")
            try await client.logout()
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "1234")
            }
            try await client.unlock(passcode: "5678")
            #expect(try await client.status().state == .unlocked)
            await client.close()
        }
    }

    @Test func wipeNeedsThePasscodeThenErasesEverything() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let raw = try agent.raw()
            let unconfirmed = try raw.call(#"{"method":"io.cordon.Agent.Wipe","parameters":{"confirm":true}}"#)
            #expect(unconfirmed.error == "io.cordon.Agent.PasscodeRequired", "\(unconfirmed.text)")
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.wipe(passcode: "0000")
            }
            #expect(try await client.status().state == .lockedNoKey)
            // Locked or not, the passcode is what a wipe needs.
            try await client.wipe(passcode: "1234")
            #expect(try await client.status().state == .uninitialized)
            // The container can be set up again, with a new passcode.
            try await client.initialize(passcode: "8642")
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "1234")
            }
            try await client.unlock(passcode: "8642")
            #expect(try await client.status().state == .unlocked)
            await client.close()
        }
    }

    @Test func maxAttemptsWipes() async throws {
        let settings = PolicySettingValues.with { $0[PolicyKeys.Passcode.maxAttempts] = 3 }
        try await withTestAgent(settings: settings, backoff: Backoff(freeAttempts: 10)) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let events = EventRecorder(try await client.events())
            try await events.waitFor(count: 1)
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 2, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "0000")
            }
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 1, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "0000")
            }
            #expect(try await client.status().state == .lockedNoKey)
            await #expect(
                throws: CordonError.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe")
            ) {
                try await client.unlock(passcode: "0000")
            }
            let status = try await client.status()
            #expect(status.state == .uninitialized)
            #expect(status.failedAttempts == 0)
            let seen = try await events.waitFor(count: 2)
            #expect(seen.last?.kind == .wiped)
            #expect(seen.last?.reason == .maxAttempts)
            // The old passcode is gone with the key; a new container can be set up.
            await #expect(throws: CordonError.notInitialized) { try await client.unlock(passcode: "1234") }
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            #expect(try await client.status().state == .unlocked)
            events.cancel()
            await client.close()
        }
    }

    @Test func backoffAsksToRetryLater() async throws {
        let backoff = Backoff(freeAttempts: 1, baseSeconds: 600, maxSeconds: 600)
        try await withTestAgent(backoff: backoff) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            await #expect(throws: CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)) {
                try await client.unlock(passcode: "0000")
            }
            let error = await #expect(throws: CordonError.self) { try await client.unlock(passcode: "0000") }
            guard case .wrongPasscode(let left, let delay, _, _, _) = error else {
                Issue.record("expected wrongPasscode, got \(String(describing: error))")
                return
            }
            #expect(left == 8)
            #expect(delay > 0)
            // Throttled: even the right passcode is not checked.
            let throttled = await #expect(throws: CordonError.self) { try await client.unlock(passcode: "1234") }
            guard case .retryLater = throttled else {
                Issue.record("expected retryLater, got \(String(describing: throttled))")
                return
            }
            #expect(try await client.status().failedAttempts == 2)
            await client.close()
        }
    }
}
