import CordonLifecycle
import CordonProtocol
import CordonSecrets
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `KeyVault` against a fake host: the machine's key actions performed on a real store, and the
/// answers it feeds back — no agent, no socket (docs/ARCHITECTURE.md, "Components").
@Suite struct KeyVaultTests {
    typealias Fixture = ComponentFixture<KeyVault>

    /// A vault whose host's machine has an unlock check in flight (so a right passcode's key is
    /// kept as the candidate), with a key created under `2468`.
    static func withCreatedKey(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(make: { try KeyVault(host: $0) }) { fixture in
            let (input, reply) = try await fixture.run { host, vault, _ throws in
                let promise = host.loop.makePromise(of: ByteBuffer.self)
                let next = host.nextInput()
                let encoder = ReplyEncoder(allocator: ByteBufferAllocator())
                vault.perform(.create, request: LifecycleRequest(promise: promise, encoder: encoder, passcode: "2468"))
                return (next, promise.futureResult)
            }
            #expect(try await input.get() == .initializeFinished(success: true, now: 1_000_000))
            // The machine answers the create with `.succeed`: the pending request gets the recovery key.
            try await fixture.run { _, vault, _ in vault.complete(nil, with: .success(())) }
            let frame = try await reply.get()
            let text = String(buffer: frame)
            #expect(text.contains("recoveryKey"))
            try await fixture.run { host, vault, _ throws in
                #expect(vault.isInitialized)
                #expect(try host.database.loadWrappedKey() != nil)
                var machine = LifecycleMachine(configuration: .builtin)
                _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
                _ = machine.handle(.unlockRequested(hasPasscode: true, now: 0))
                host.lifecycle = machine
            }
            try await body(fixture)
        }
    }

    /// Runs a passcode check as the machine asks for one: the counter write, then the check.
    static func check(_ passcode: String, count: Int, in fixture: Fixture) async throws -> LifecycleInput {
        let input = try await fixture.run { host, vault, _ throws in
            let next = host.nextInput()
            let request = LifecycleRequest(
                promise: host.loop.makePromise(), encoder: ReplyEncoder(allocator: ByteBufferAllocator()),
                passcode: passcode)
            vault.perform(.persistAttempts(count: count, lastFailureAt: nil, then: .checkPasscode), request: request)
            return next
        }
        let checked = try await input.get()
        // The machine answers the pending request next (here: whatever it would say).
        try await fixture.run { _, vault, _ in vault.complete(nil, with: .success(())) }
        return checked
    }

    @Test func aRightPasscodeOpensTheKeyOnlyOnceInstalledAndDiscardZeroesIt() async throws {
        try await Self.withCreatedKey { fixture in
            #expect(
                try await Self.check("2468", count: 1, in: fixture) == .passcodeChecked(correct: true, now: 1_000_000))
            try await fixture.run { host, vault, _ throws in
                // The counter was stored before the check ran.
                #expect(try host.database.loadAttempts().count == 1)
                // Checked, not yet installed: no key to derive from.
                #expect(vault.appKey(for: "com.example.notes") == nil)
                vault.perform(.install, request: nil)
                let notes = try #require(vault.appKey(for: "com.example.notes"))
                let again = try #require(vault.appKey(for: "com.example.notes"))
                let other = try #require(vault.appKey(for: "com.example.mail"))
                #expect(notes.withUnsafeBytes { Array($0) } == again.withUnsafeBytes { Array($0) })
                #expect(notes.withUnsafeBytes { Array($0) } != other.withUnsafeBytes { Array($0) })
                // Random, stored wrapped before it was handed out; never the derivation.
                let stored = try host.database.wrappedAppKeys()
                #expect(Set(stored.keys) == ["com.example.notes", "com.example.mail"])
                #expect(
                    notes.withUnsafeBytes { Array($0) }
                        != KeyCustody().legacyAppKey(master: try #require(vault.masterKey), appId: "com.example.notes")
                        .withUnsafeBytes { Array($0) })
                // A selective wipe destroys it: none meanwhile, a new random one afterwards.
                vault.destroyingAppKey("com.example.notes")
                #expect(vault.appKey(for: "com.example.notes") == nil)
                _ = try host.database.destroyAppKey(appId: "com.example.notes", now: 1)
                vault.appKeyDestroyed("com.example.notes", failed: false)
                let wiped = try #require(vault.appKey(for: "com.example.notes"))
                #expect(notes.withUnsafeBytes { Array($0) } != wiped.withUnsafeBytes { Array($0) })
                #expect(try host.database.wrappedAppKeys()["com.example.notes"] != stored["com.example.notes"])
                #expect(vault.purposeKey(["tokens", "0"]) != nil)
                let held = try #require(vault.appKeys["com.example.notes"])
                vault.perform(.discard, request: nil)
                #expect(held.isZeroed, "the unwrapped app key is zeroed with the master key")
                #expect(vault.appKey(for: "com.example.notes") == nil)
                #expect(vault.purposeKey(["tokens", "0"]) == nil)
            }
        }
    }

    @Test func aWipeAndShutdownZeroTheUnwrappedAppKeys() async throws {
        // An unlocked vault holding the notes app's key; `end` ends it and checks what is left.
        func holdingAppKey(_ end: @escaping @Sendable (KeyVault, SecureBytes) throws -> Void) async throws {
            try await Self.withCreatedKey { fixture in
                _ = try await Self.check("2468", count: 1, in: fixture)
                try await fixture.run { _, vault, _ throws in
                    vault.perform(.install, request: nil)
                    _ = try #require(vault.appKey(for: "com.example.notes"))
                    try end(vault, try #require(vault.appKeys["com.example.notes"]))
                }
            }
        }
        try await holdingAppKey { vault, held in
            vault.perform(.erase, request: nil)
            #expect(held.isZeroed)
            #expect(vault.wrappedAppKeys.isEmpty)
        }
        try await holdingAppKey { vault, held in
            vault.shutdown()
            #expect(held.isZeroed)
            #expect(vault.appKey(for: "com.example.notes") == nil)
        }
    }

    @Test func aWrongPasscodeIsAWrongAttemptAndLeavesNoCandidate() async throws {
        try await Self.withCreatedKey { fixture in
            #expect(
                try await Self.check("1357", count: 1, in: fixture) == .passcodeChecked(correct: false, now: 1_000_000))
            try await fixture.run { host, vault, _ throws in
                #expect(vault.candidateKey == nil)
                vault.perform(.install, request: nil)
                #expect(vault.appKey(for: "com.example.notes") == nil)
                #expect(try host.database.loadAttempts().count == 1)
            }
        }
    }

    @Test func eraseRemovesTheStoredKey() async throws {
        try await Self.withCreatedKey { fixture in
            let erased = try await fixture.run { host, vault, _ throws in
                vault.perform(.erase, request: nil)
                #expect(!vault.isInitialized)
                // Queued behind the erase on the serial store pool.
                let database = host.database
                return host.storePool.runIfActive(eventLoop: host.loop) { try database.loadWrappedKey() == nil }
            }
            #expect(try await erased.get())
        }
    }

    @Test func initializeWithAPasscodeTheRulesRefuseNeverReachesTheMachine() async throws {
        try await Fixture.with(make: { try KeyVault(host: $0) }) { fixture in
            let reply = try await fixture.call(.initialize, ["passcode": .string("1")]) { vault, call in
                try vault.serveInitialize(call)
            }
            #expect(reply["error"] == .string("io.cordon.Agent.InvalidPasscode"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }

    @Test func unlockWithoutAPasscodeNeedsAVerifiedApp() async throws {
        try await Fixture.with(make: { try KeyVault(host: $0) }) { fixture in
            let reply = try await fixture.call(.unlock, [:]) { vault, call in try vault.serveUnlock(call) }
            #expect(reply["error"] == .string("io.cordon.Agent.PasscodeRequired"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }
}

extension JSONValue {
    /// The member `key` of an object; nil otherwise.
    subscript(_ key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
