import CordonLifecycle
import CordonPolicy
import CordonProtocol
import NIOCore

extension Agent {
    /// Performs an event the machine emitted: deadlines in the registry, every component's
    /// reaction, then the fan-out to every subscriber.
    func broadcast(_ event: CordonEvent) {
        let fallbackMs = machine.configuration.ackDeadlineMs
        // Apps whose key the device's posture revoked stay revoked (and frozen) through an unlock.
        let thawed = apps.registry.eventEmitted(
            event,
            deadline: { [policy] app in
                // An override may give one app another deadline than the one on the wire.
                let ms = policy.policy.forApp(app.appId)[PolicyKeys.Lock.ackDeadlineMs].value ?? fallbackMs
                return event.time + Double(ms) / 1000
            }, stillRevoked: Set(posture.blocked.keys))
        // Frozen apps resume only after their key event is queued to them.
        defer {
            enforcement.thaw(thawed)
            if event.kind == .encryptionKeyAvailable { enforcement.releaseSupervisorHolds() }
        }
        for component in components { component.observe(event) }
        logger.info(
            "event",
            metadata: [
                "kind": "\(event.kind.rawValue)", "seq": "\(event.seq)", "reason": "\(event.reason.rawValue)",
                "state": "\(event.state.rawValue)",
            ])
        eventBus.publish(event, withholdingFrom: event.kind == .encryptionKeyAvailable ? Set(posture.blocked.keys) : [])
    }
}
