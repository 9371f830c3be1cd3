import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import NIOCore

extension Agent {
    /// The lifecycle settings the policy dictates while the apps registered now are: the base
    /// tightened by their overrides' container-wide keys (`SettingScope.container`). The daemon's
    /// back-off stays.
    func lifecycleConfiguration(from effective: EffectivePolicy) -> LifecycleConfiguration {
        LifecycleConfiguration(containerSettings(of: effective), backoff: configuration.backoff)
    }

    /// The container-wide settings in force: the base tightened by every registered app's override.
    func containerSettings(of effective: EffectivePolicy? = nil) -> EffectivePolicySettings {
        (effective ?? policy.policy).containerSettings(registeredApps: apps.registry.registrations.values.map(\.appId))
    }

    /// Recomputes the lifecycle settings after the registered apps changed (an override's
    /// container-wide lock keys apply only while its app is registered), and re-arms the timers.
    func registeredAppsChanged() {
        // The periodic posture reading runs while an app is registered (docs/ARCHITECTURE.md, "Posture").
        posture.schedule()
        let next = lifecycleConfiguration(from: policy.policy)
        guard next != machine.configuration else { return }
        machine.configuration = next
        logger.info(
            "lock settings follow the registered apps",
            metadata: [
                "idleTimeoutSeconds": "\(next.idleTimeoutSeconds)", "reauthGraceSeconds": "\(next.reauthGraceSeconds)",
                "discardKeyOnLock": "\(next.discardKeyOnLock)",
            ])
        rescheduleTimer()
        stateObserver?()
    }
}
