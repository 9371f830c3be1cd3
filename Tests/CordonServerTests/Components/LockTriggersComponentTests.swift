import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import CordonServer

/// `LockTriggersComponent` against a fake host: each trigger locks (or not) as the container-wide
/// `lock` settings say, with the reason the trigger gives (docs/ARCHITECTURE.md, "Lock triggers").
@Suite struct LockTriggersComponentTests {
    typealias Fixture = ComponentFixture<LockTriggersComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)

    static func with(_ document: PolicyDocument = PolicyDocument(), _ body: (Fixture) async throws -> Void)
        async throws
    {
        try await Fixture.with(
            documents: [(document, admin)],
            make: { base in
                let host = FakeLockTriggerHost(base)
                base.retained.append(host)
                return LockTriggersComponent(host: host)
            }, body)
    }

    static func inputs(after trigger: LockTrigger, in fixture: Fixture) async throws -> [LifecycleInput] {
        try await fixture.run { host, triggers, _ in
            triggers.fired(trigger)
            return host.inputs
        }
    }

    @Test func aScreenLockLocksWithItsReason() async throws {
        try await Self.with { fixture throws in
            let inputs = try await Self.inputs(after: .screenLock(source: "logind"), in: fixture)
            #expect(inputs == [.lock(reason: .screenLock, now: 1_000_000)])
        }
    }

    @Test func aScreenLockTheSettingsIgnoreDoesNothing() async throws {
        try await Self.with(PolicyDocument(PolicyKeys.Lock.onScreenLock(false))) { fixture throws in
            #expect(try await Self.inputs(after: .screenLock(source: "logind"), in: fixture).isEmpty)
        }
    }

    @Test func anIdleHintLocksOnlyWhileTheIdleTimeoutIsOn() async throws {
        try await Self.with(PolicyDocument(PolicyKeys.Lock.onSessionIdle(true))) { fixture throws in
            #expect(try await Self.inputs(after: .idle, in: fixture) == [.lock(reason: .idleTimeout, now: 1_000_000)])
            let off = try await fixture.run { host, triggers, _ in
                var machine = LifecycleMachine(configuration: .builtin)
                machine.configuration.idleTimeoutSeconds = 0
                host.lifecycle = machine
                triggers.fired(.idle)
                return host.inputs.count
            }
            #expect(off == 1, "no second lock with the idle timeout off")
        }
    }

    @Test func aSuspendLocksAndWaitsForTheEventsToBeWritten() async throws {
        try await Self.with(PolicyDocument(PolicyKeys.Lock.onSuspend(true))) { fixture throws in
            let (inputs, waited) = try await fixture.run { host, triggers, _ in
                triggers.fired(.suspend)
                let hooks = host.retained.compactMap { $0 as? FakeLockTriggerHost }.first
                return (host.inputs, hooks?.eventsWaitedFor ?? 0)
            }
            #expect(inputs == [.lock(reason: .suspend, now: 1_000_000)])
            #expect(waited == 1)
        }
    }

    @Test func aResumeReadsThePostureAgainAndDoesNotLock() async throws {
        try await Self.with { fixture throws in
            let (inputs, refreshes) = try await fixture.run { host, triggers, _ in
                triggers.fired(.resume)
                let hooks = host.retained.compactMap { $0 as? FakeLockTriggerHost }.first
                return (host.inputs, hooks?.postureRefreshes ?? [])
            }
            #expect(inputs.isEmpty)
            #expect(refreshes == ["resume from suspend"])
        }
    }

    @Test func nothingLocksWhileTheAgentStops() async throws {
        try await Self.with { fixture throws in
            let inputs = try await fixture.run { host, triggers, _ in
                host.isShuttingDown = true
                triggers.fired(.screenLock(source: "logind"))
                return host.inputs
            }
            #expect(inputs.isEmpty)
        }
    }
}

/// The fake host with the lock triggers' hooks: the settings from the fake's policy, the posture
/// refreshes and the waits for written events recorded.
final class FakeLockTriggerHost: ForwardingHost, LockTriggerHooks {

    private(set) var postureRefreshes: [String] = []
    private(set) var eventsWaitedFor = 0
    func containerSettingsNow() -> EffectivePolicySettings { base.policy.policy.containerSettings(registeredApps: []) }
    func refreshPosture(why: String) { postureRefreshes.append(why) }
    func eventsWritten() -> EventLoopFuture<Void> {
        eventsWaitedFor += 1
        return loop.makeSucceededVoidFuture()
    }
}
