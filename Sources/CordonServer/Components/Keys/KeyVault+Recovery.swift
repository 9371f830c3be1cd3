import CordonLifecycle
import CordonProtocol
import CordonSecrets
import Foundation
import NIOCore

/// The recovery key (docs/ARCHITECTURE.md, "Keys"): `Recover` unwraps the master key with it, sets
/// a new passcode, re-seals under the TPM present (or software, as the policy allows) and makes a
/// new recovery key, so the one given stops working. A wrong key is counted like a wrong passcode
/// by the lifecycle machine (`authorizeRequested`) and answered `InvalidRecoveryKey`.
extension KeyVault {
    /// Serves `Recover`: a mistyped key (a group's check) and a passcode the rules refuse are
    /// answered at once and not counted; otherwise the check runs like a passcode's.
    func recover(_ parameters: RecoverParameters, encoder: ReplyEncoder, now: Double) throws(VarlinkError)
        -> CallOutcome
    {
        let key: RecoveryKey
        do throws(RecoveryKeyError) {
            key = try RecoveryKey.parse(parameters.recoveryKey)
        } catch {
            throw CordonError.invalidRecoveryKey(reason: error.description).varlinkError
        }
        if let problem = passcodeRules.problem(with: parameters.passcode) {
            key.secret.zero()
            throw CordonError.invalidPasscode(reason: problem).varlinkError
        }
        var context = LifecycleRequest(promise: host.loop.makePromise(), encoder: encoder)
        context.passcode = parameters.passcode
        context.recoveryKey = key
        host.run(.authorizeRequested(hasPasscode: true, now: now), request: context)
        // A check that never started (busy, back-off) leaves the key here: zeroed either way.
        if pending?.recoveryKey == nil { key.secret.zero() }
        return .deferred(context.promise.futureResult)
    }

    /// Unwraps with the recovery key, re-wraps under `newPasscode` with a new recovery key and
    /// stores it, off the loop; the attempt counter is stored first, as for a passcode.
    func startRecovery(with recoveryKey: RecoveryKey, newPasscode: String, count: Int, lastFailureAt: Double?) {
        guard let wrapped = wrappedKey else {
            recoveryKey.secret.zero()
            host.run(.checkAborted(now: host.clock()))
            return
        }
        let database = host.database
        let custody = self.custody
        let sealing = keySealing
        let softwareRules = softwareOnlyRules
        let migration = appKeyMigration
        let job = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CheckResult in
            defer { recoveryKey.secret.zero() }
            do {
                try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
            } catch {
                return .counterNotStored(String(describing: error))
            }
            guard let sealed = wrapped.recovery else {
                throw CordonError.invalidRecoveryKey(
                    reason: "this container has no recovery key (it was initialized before recovery keys)")
            }
            let master: SecureBytes
            let format: KeystoreFormat
            do {
                (master, format) = try custody.unwrapWithRecoveryReportingFormat(
                    sealed, recoveryKey: recoveryKey.secret)
            } catch {
                return .wrongRecoveryKey
            }
            defer { master.zero() }
            let next = RecoveryKey.generate()
            defer { next.secret.zero() }
            var kdf = wrapped.kdf
            kdf.salt = custody.makeSalt()
            let recovery = try custody.wrapForRecovery(master, recoveryKey: next.secret)
            let (rewrapped, warning) = try sealing.wrap(master, passcode: newPasscode, kdf: kdf, recovery: recovery)
            if let refusal = softwareRules.problem(with: newPasscode, wrapped: rewrapped) {
                return .newPasscodeRefused(refusal)
            }
            // A recovery wrapping made before random app keys: the container may not be migrated
            // yet (its passcode wrapping, which would say, needs the passcode): migrate, adding a
            // row for each app that may have data and has none (docs/THREAT-MODEL.md, "App storage").
            var migrated: [String: [UInt8]]?
            if format == .derivedAppKeys {
                migrated = try migration.migrate(master: master, keystore: rewrapped)
            } else {
                try database.saveWrappedKey(rewrapped, now: Date().timeIntervalSince1970)
            }
            return .recovered(
                rewrapped, next.formatted, sealing.status(of: rewrapped, warning: warning), migratedAppKeys: migrated)
        }
        job.assumeIsolated().whenComplete { [self] result in
            finishCheck(result, unlocking: false)
        }
    }
}
