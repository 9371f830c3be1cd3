import CordonLifecycle
import CordonPolicy
import CordonSystem
import NIOCore

extension Agent {
    /// How long a suspend waits at most for a slow subscriber to take its `DidLock`
    /// (logind's own `InhibitDelayMaxSec` is 5 s by default).
    static let suspendFlushSeconds: Int64 = 4

    /// A D-Bus lock trigger fired: lock as the policy's `lock` section says. A suspend's sleep
    /// inhibitor is released once the lock's events are written to every subscriber.
    func lockTriggerFired(_ trigger: LockTrigger) {
        loop.preconditionInEventLoop()
        guard !isShuttingDown else {
            if trigger == .suspend { lockTriggers?.releaseSleepInhibitor() }
            return
        }
        let lock = containerSettings()
        switch trigger {
        case .screenLock(let source):
            guard lock[PolicyKeys.Lock.onScreenLock].value else {
                logger.info("screen lock ignored: lock.onScreenLock is false", metadata: ["source": "\(source)"])
                return
            }
            logger.notice("screen locked: locking the container", metadata: ["source": "\(source)"])
            run(.lock(reason: .screenLock, now: clock()))
        case .idle:
            guard machine.configuration.idleTimeoutSeconds > 0 else {
                logger.info("idle hint ignored: the idle timeout is off")
                return
            }
            guard lock[PolicyKeys.Lock.onSessionIdle].value else {
                logger.info("idle hint ignored: lock.onSessionIdle is false")
                return
            }
            logger.notice("session idle: locking the container", metadata: ["source": "logind.IdleHint"])
            run(.lock(reason: .idleTimeout, now: clock()))
        case .resume:
            logger.info("system resumed: reading the device posture again")
            posture.refresh(why: "resume from suspend")
        case .suspend:
            guard lock[PolicyKeys.Lock.onSuspend].value else {
                logger.info("suspend ignored: lock.onSuspend is false")
                lockTriggers?.releaseSleepInhibitor()
                return
            }
            logger.notice("system going to sleep: locking the container")
            run(.lock(reason: .suspend, now: clock()))
            eventBus.flushed().assumeIsolated().whenComplete { [self] _ in
                logger.info("lock events written: releasing the sleep inhibitor")
                lockTriggers?.releaseSleepInhibitor()
            }
        }
    }
}
