import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import NIOCore

extension Agent {
    /// The lifecycle settings the policy dictates while the apps registered now are: the base
    /// `lock` section tightened by their overrides' container-wide keys (`LockSettingScope`). The
    /// daemon's back-off stays.
    func lifecycleConfiguration(from effective: EffectivePolicy) -> LifecycleConfiguration {
        let defaults = configuration.lifecycle
        let lock = containerLock(of: effective)
        let passcode = effective.passcode
        return LifecycleConfiguration(
            idleTimeoutSeconds: lock.idleTimeoutSeconds.value,
            reauthGraceSeconds: lock.reauthGraceSeconds.value ?? defaults.reauthGraceSeconds,
            discardKeyOnLock: lock.discardKeyOnLock.value,
            maxAttempts: passcode.maxAttempts.value ?? defaults.maxAttempts,
            ackDeadlineMs: lock.ackDeadlineMs.value ?? defaults.ackDeadlineMs,
            minPasscodeLength: max(passcode.minLength.value, 1), backoff: defaults.backoff,
            onMaxAttempts: passcode.onMaxAttempts.value == .wipe ? .wipe : .lockout)
    }

    /// The container-wide lock settings in force: the base tightened by every registered app's override.
    func containerLock(of effective: EffectivePolicy? = nil) -> EffectiveLockSettings {
        (effective ?? policy.policy).containerLock(registeredApps: registry.registrations.values.map(\.appId))
    }

    /// Recomputes the lifecycle settings after the registered apps changed (an override's
    /// container-wide lock keys apply only while its app is registered), and re-arms the timers.
    func registeredAppsChanged() {
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

    /// The passcode rules the policy dictates.
    var passcodeRules: PasscodeRules {
        let passcode = policy.policy.passcode
        return PasscodeRules(
            minLength: max(passcode.minLength.value, 1), requireAlphanumeric: passcode.kind.value == .alphanumeric,
            allowSimple: passcode.allowSimple.value)
    }
}
