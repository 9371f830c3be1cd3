import CordonLifecycle
import CordonPolicy
import CordonSystem
import NIOCore

/// The D-Bus lock triggers (docs/ARCHITECTURE.md, "Lock triggers"): the screen locking, the
/// session going idle, the system suspending or resuming lock the container as the policy's
/// `lock` section says. The bus thread (`BusLockTriggers`) hands each trigger to the loop.
final class LockTriggersComponent: AgentComponent {
    /// What the lock triggers need of the agent.
    typealias Host = LifecycleDriver & LockTriggerHooks

    unowned let host: any Host
    /// The bus connection, while it runs (`AgentServer+LockTriggers.swift`).
    var triggers: BusLockTriggers?
    /// The triggers in force, as `GetStatus` lists them.
    var active: [String] = []

    init(host: any Host) {
        self.host = host
    }

    /// A D-Bus lock trigger fired: lock as the policy's `lock` section says. A suspend's sleep
    /// inhibitor is released once the lock's events are written to every subscriber.
    func fired(_ trigger: LockTrigger) {
        host.loop.preconditionInEventLoop()
        guard !host.isShuttingDown else {
            if trigger == .suspend { triggers?.releaseSleepInhibitor() }
            return
        }
        let lock = host.containerSettingsNow()
        switch trigger {
        case .screenLock(let source):
            guard lock[PolicyKeys.Lock.onScreenLock].value else {
                host.logger.info("screen lock ignored: lock.onScreenLock is false", metadata: ["source": "\(source)"])
                return
            }
            host.logger.notice("screen locked: locking the container", metadata: ["source": "\(source)"])
            host.run(.lock(reason: .screenLock, now: host.clock()))
        case .idle:
            guard host.lifecycle.configuration.idleTimeoutSeconds > 0 else {
                host.logger.info("idle hint ignored: the idle timeout is off")
                return
            }
            guard lock[PolicyKeys.Lock.onSessionIdle].value else {
                host.logger.info("idle hint ignored: lock.onSessionIdle is false")
                return
            }
            host.logger.notice("session idle: locking the container", metadata: ["source": "logind.IdleHint"])
            host.run(.lock(reason: .idleTimeout, now: host.clock()))
        case .resume:
            host.logger.info("system resumed: reading the device posture again")
            host.refreshPosture(why: "resume from suspend")
        case .suspend:
            guard lock[PolicyKeys.Lock.onSuspend].value else {
                host.logger.info("suspend ignored: lock.onSuspend is false")
                triggers?.releaseSleepInhibitor()
                return
            }
            host.logger.notice("system going to sleep: locking the container")
            host.run(.lock(reason: .suspend, now: host.clock()))
            host.eventsWritten().assumeIsolated().whenComplete { [self] _ in
                host.logger.info("lock events written: releasing the sleep inhibitor")
                triggers?.releaseSleepInhibitor()
            }
        }
    }
}

/// What the lock triggers need beyond the lifecycle: the container-wide settings, the posture,
/// and when every subscriber has the events written so far.
protocol LockTriggerHooks: AnyObject {
    /// The container-wide settings in force (the base tightened by registered apps' overrides).
    func containerSettingsNow() -> EffectivePolicySettings
    /// Reads the device's posture again.
    func refreshPosture(why: String)
    /// Completes once every event so far is written to every subscriber.
    func eventsWritten() -> EventLoopFuture<Void>
}
