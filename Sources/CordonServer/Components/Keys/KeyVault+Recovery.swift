import CordonLifecycle
import CordonProtocol
import CordonSecrets
import CordonStore
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
        let keeper = anchorKeeper
        let migration = appKeyMigration
        let job = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CheckResult in
            defer { recoveryKey.secret.zero() }
            // A state refused as rolled back is not restored: the recovery key opens the copy, not the TPM's state.
            if let refusal = Self.anchorRefusal(database, keeper: keeper, wrapped: wrapped, wiping: false) {
                return .notEvaluated(refusal, nil)
            }
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
            // The anchor's TPM is gone (the database moved, the TPM was cleared): a new anchor on this one.
            var replacement: StateAnchor?
            if Self.lostAnchor(database) != nil, sealing.hardware != .off {
                replacement = try? keeper.create()
            }
            let anchorIndex = Self.lostAnchor(database) == nil ? wrapped.anchorIndex : replacement?.reference.index
            let (rewrapped, warning) = try sealing.wrap(
                master, passcode: newPasscode, kdf: kdf, recovery: recovery, anchorIndex: anchorIndex)
            if let refusal = softwareRules.problem(with: newPasscode, wrapped: rewrapped) {
                if let replacement { keeper.remove(replacement.reference) }
                return .newPasscodeRefused(refusal)
            }
            // A recovery wrapping made before random app keys: the container may not be migrated
            // yet (its passcode wrapping, which would say, needs the passcode): migrate, adding a
            // row for each app that may have data and has none (docs/THREAT-MODEL.md, "App storage").
            var migrated: [String: [UInt8]]?
            let now = Date().timeIntervalSince1970
            if format == .derivedAppKeys {
                migrated = try migration.migrate(master: master, keystore: rewrapped, anchor: replacement)
            } else if let replacement {
                try database.saveWrappedKey(rewrapped, now: now, anchor: replacement)
            } else if Self.lostAnchor(database) != nil {
                try database.saveWrappedKeyDroppingAnchor(rewrapped, now: now)
            } else {
                try database.saveWrappedKey(rewrapped, now: now)
            }
            return .recovered(
                rewrapped, next.formatted, sealing.status(of: rewrapped, warning: warning), migratedAppKeys: migrated)
        }
        job.assumeIsolated().whenComplete { [self] result in
            finishCheck(result, unlocking: false)
        }
    }

    /// Why a recovery key is refused: how many attempts are left before the max-attempts action and
    /// what it does, or, when this attempt reached it, what it did (an erased container says so).
    static func recoveryKeyRefusal(left: Int, action: MaxAttemptsAction) -> String {
        switch (left, action) {
        case (0, .wipe):
            return "it does not open the stored key, and that was the last attempt (passcode.maxAttempts): "
                + "the container was erased (passcode.onMaxAttempts: wipe) and its data is gone"
        case (0, .lockout):
            return "it does not open the stored key, and no attempts are left (passcode.maxAttempts): "
                + "cordond is locked out (passcode.onMaxAttempts: lockout), one attempt per maximum back-off delay"
        case (_, .wipe):
            return "it does not open the stored key (\(left) attempt\(left == 1 ? "" : "s") left before the "
                + "max-attempts action: then the container will be erased and its data lost)"
        case (_, .lockout):
            return "it does not open the stored key (\(left) attempt\(left == 1 ? "" : "s") left before the "
                + "max-attempts action: then cordond locks out, one attempt per maximum back-off delay)"
        }
    }
}
