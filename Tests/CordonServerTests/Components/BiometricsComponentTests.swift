import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import Foundation
import Testing

@testable import CordonServer

/// `BiometricsComponent` against a fake host: turning fingerprint unlock on needs the policy, the
/// passcode and an unlocked container, and is stored; a fingerprint unlock is refused with the
/// typed error that says why, before any scan (docs/THREAT-MODEL.md, "Fingerprint unlock").
@Suite struct BiometricsComponentTests {
    typealias Fixture = ComponentFixture<BiometricsComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)

    /// The component and its vault (kept alive by the host); the machine initialised and locked.
    static func with(
        _ biometrics: BiometricsPolicy = .allowed, state: LifecycleState, _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(PolicyDocument(PolicyKeys.Passcode.biometrics(biometrics)), admin)],
            configure: { host in
                host.lifecycleState = state
                var machine = LifecycleMachine(configuration: .builtin)
                if state != .uninitialized {
                    _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
                }
                host.lifecycle = machine
            },
            make: { host in
                let vault = try KeyVault(host: host)
                host.retained.append(vault)
                // The vault's own component, as in the agent: the vault's key actions reach it.
                return vault.biometrics
            }
        ) { fixture in
            try await body(fixture)
            try await fixture.run { _, biometrics, _ in biometrics.shutdown() }
        }
    }

    static func set(_ enabled: Bool, passcode: String? = "2468", in fixture: Fixture) async throws -> JSONValue {
        var parameters: [String: JSONValue] = ["enabled": .bool(enabled)]
        if let passcode { parameters["passcode"] = .string(passcode) }
        return try await fixture.call(.setBiometrics, parameters) { try $0.serveSetBiometrics($1) }
    }

    static func unlock(_ fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.unlockWithFingerprint) { try $0.serveUnlock($1) }
    }

    @Test func turningItOnWhileLockedIsRefused() async throws {
        try await Self.with(state: .lockedKeyHeld) { fixture in
            #expect(try await Self.set(true, in: fixture)["error"] == .string("io.cordon.Agent.Locked"))
            let (inputs, stored) = try await fixture.run { host, _, _ throws in
                (host.inputs, try host.database.loadBiometricsOptIn())
            }
            #expect(inputs.isEmpty)
            #expect(!stored)
        }
    }

    @Test func turningItOnNeedsThePolicyAndThePasscode() async throws {
        try await Self.with(.disabled, state: .unlocked) { fixture throws in
            #expect(try await Self.set(true, in: fixture)["error"] == .string("io.cordon.Agent.BiometricsDisabled"))
        }
        try await Self.with(state: .unlocked) { fixture in
            let reply = try await Self.set(true, passcode: nil, in: fixture)
            #expect(reply["error"] == .string("io.cordon.Agent.PasscodeRequired"))
        }
    }

    @Test func turningItOnWithThePasscodeStoresTheOptIn() async throws {
        try await Self.with(state: .unlocked) { fixture in
            let (input, reply) = try await fixture.callAuthorized(
                .setBiometrics, ["enabled": .bool(true), "passcode": .string("2468")]
            ) { try $0.serveSetBiometrics($1) }
            #expect(input == .authorizeRequested(hasPasscode: true, now: 1_000_000))
            #expect(reply["error"] == nil)
            let (optedIn, stored) = try await fixture.run { host, biometrics, _ throws in
                (biometrics.optedIn, try host.database.loadBiometricsOptIn())
            }
            #expect(optedIn)
            #expect(stored)
        }
    }

    @Test func aFingerprintUnlockWithoutTheOptInIsRefused() async throws {
        try await Self.with(state: .lockedNoKey) { fixture throws in
            #expect(try await Self.unlock(fixture)["error"] == .string("io.cordon.Agent.BiometricsNotEnabled"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
        try await Self.with(.disabled, state: .lockedNoKey) { fixture throws in
            #expect(try await Self.unlock(fixture)["error"] == .string("io.cordon.Agent.BiometricsDisabled"))
        }
        try await Self.with(state: .uninitialized) { fixture throws in
            #expect(try await Self.unlock(fixture)["error"] == .string("io.cordon.Agent.NotInitialized"))
        }
    }

    @Test func aFingerprintUnlockNeedsAPasscodeUnlockFirst() async throws {
        try await Self.with(state: .unlocked) { fixture in
            _ = try await fixture.callAuthorized(
                .setBiometrics, ["enabled": .bool(true), "passcode": .string("2468")]
            ) { try $0.serveSetBiometrics($1) }
            var machine = LifecycleMachine(configuration: .builtin)
            _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
            try await fixture.run { [machine] host, _, _ in
                host.lifecycleState = machine.state
                host.lifecycle = machine
            }
            let reply = try await Self.unlock(fixture)
            #expect(reply["error"] == .string("io.cordon.Agent.BiometricsPasscodeNeeded"))
        }
    }

    /// Issue #27, case 7: reaching `passcode.maxAttempts` (here: lockout) zeroes the key kept for
    /// fingerprint unlock; once the lockout is over, a finger alone is refused until the passcode.
    @Test func reachingMaxAttemptsZeroesTheKeptKey() async throws {
        try await Self.with(state: .unlocked) { fixture in
            _ = try await fixture.callAuthorized(
                .setBiometrics, ["enabled": .bool(true), "passcode": .string("2468")]
            ) { try $0.serveSetBiometrics($1) }
            // A passcode unlock arms it: the vault holds the master key, `DidUnlock` follows.
            let armed = try await fixture.run { host, biometrics, _ -> Bool in
                biometrics.vault.candidateKey = SecureBytes(copying: [UInt8](repeating: 7, count: 32))
                biometrics.vault.perform(.install, request: nil)
                biometrics.passcodeUnlocking = true
                biometrics.observe(
                    CordonEvent(seq: 1, payload: .didUnlock, reason: .userRequest, time: host.clock(), state: .unlocked)
                )
                let key = biometrics.unsealMaster()
                defer { key?.zero() }
                return key != nil && biometrics.gate.lastPasscodeUnlockAt != nil
            }
            #expect(armed)
            // The machine answers the last allowed wrong attempt with `maxAttemptsReached` first.
            var machine = LifecycleMachine(
                configuration: LifecycleConfiguration(
                    idleTimeoutSeconds: 0, reauthGraceSeconds: 0, discardKeyOnLock: false, maxAttempts: 1,
                    ackDeadlineMs: 1000, minPasscodeLength: 4, backoff: Backoff(maxSeconds: 0), onMaxAttempts: .lockout)
            )
            _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
            _ = machine.handle(.unlockRequested(hasPasscode: true, now: 0))
            let actions = machine.handle(.passcodeChecked(correct: false, now: 0))
            #expect(actions.first == .maxAttemptsReached)
            let disarmed = try await fixture.run { [machine] host, biometrics, _ -> Bool in
                biometrics.vault.perform(.maxAttemptsReached, request: nil)
                host.lifecycleState = machine.state
                host.lifecycle = machine
                return biometrics.unsealMaster() == nil && biometrics.gate.lastPasscodeUnlockAt == nil
            }
            #expect(disarmed)
            #expect(machine.retryAfter(now: 1) == 0, "the lockout is over")
            let reply = try await Self.unlock(fixture)
            #expect(reply["error"] == .string("io.cordon.Agent.BiometricsPasscodeNeeded"))
        }
    }

    /// Issue #32, item 10: 48 hours after the last passcode unlock (the host's clock, injected),
    /// a fingerprint unlock is refused with that reason — also once the kept key is zeroed, as the
    /// agent's timer zeroes it at the limit — not with "no passcode unlock since the agent started".
    @Test func pastTheReauthLimitTheRefusalSaysSo() async throws {
        try await Self.with(state: .unlocked) { fixture in
            _ = try await fixture.callAuthorized(
                .setBiometrics, ["enabled": .bool(true), "passcode": .string("2468")]
            ) { try $0.serveSetBiometrics($1) }
            var machine = LifecycleMachine(configuration: .builtin)
            _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
            let armed = try await fixture.run { [machine] host, biometrics, _ -> Bool in
                biometrics.vault.candidateKey = SecureBytes(copying: [UInt8](repeating: 7, count: 32))
                biometrics.vault.perform(.install, request: nil)
                biometrics.passcodeUnlocking = true
                biometrics.observe(
                    CordonEvent(seq: 1, payload: .didUnlock, reason: .userRequest, time: host.clock(), state: .unlocked)
                )
                // Locked, 48 hours and a second later.
                host.lifecycleState = machine.state
                host.lifecycle = machine
                host.now += FingerprintGate.defaultReauthSeconds + 1
                return biometrics.isArmed
            }
            #expect(armed)
            let expected = JSONValue.string("more than 48 hours since the last passcode unlock")
            let first = try await Self.unlock(fixture)
            #expect(first["error"] == .string("io.cordon.Agent.BiometricsPasscodeNeeded"))
            #expect(first["parameters"]?["reason"] == expected, "\(first)")
            // The kept key is zeroed now; asked again, the reason is still the limit.
            #expect(try await fixture.run { _, biometrics, _ in !biometrics.isArmed })
            let second = try await Self.unlock(fixture)
            #expect(second["parameters"]?["reason"] == expected, "\(second)")
        }
    }
}
