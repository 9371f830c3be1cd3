import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import Dispatch
import Foundation
import NIOCore

extension KeyVault {
    /// How the key is sealed now: the policy's `passcode.hardware` and `passcode.pcrs`, the TPM's TCTI.
    var keySealing: KeySealing {
        let policy = host.policy.policy
        return KeySealing(
            custody: custody, tcti: host.configuration.tpmTCTI, hardware: policy[PolicyKeys.Passcode.hardware].value,
            pcrs: policy[PolicyKeys.Passcode.pcrs].value.sorted)
    }

    /// Stores the attempt counter, then (only if that worked) checks the passcode off the loop.
    func startCheck(_ work: LifecycleAction, count: Int, lastFailureAt: Double?, request: LifecycleRequest?) {
        if let request, let device = request.fingerprintDevice, work == .checkPasscode {
            startFingerprintCheck(device: device, count: count, lastFailureAt: lastFailureAt, request: request)
            return
        }
        guard let request, let passcode = request.passcode, let wrapped = wrappedKey else {
            host.run(.checkAborted(now: host.clock()), request: nil)
            return
        }
        pending = PendingRequest(
            promise: request.promise, passcode: passcode, newPasscode: request.newPasscode, encoder: request.encoder,
            recoveryKey: request.recoveryKey)
        if let recoveryKey = request.recoveryKey {
            startRecovery(with: recoveryKey, newPasscode: passcode, count: count, lastFailureAt: lastFailureAt)
            return
        }
        let rewrapTo = work == .rewrapMasterKey ? request.newPasscode : nil
        let database = host.database
        let custody = self.custody
        let sealing = keySealing
        let softwareRules = softwareOnlyRules
        let migration = appKeyMigration
        let job = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CheckResult in
            do {
                try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
            } catch {
                return .counterNotStored(String(describing: error))
            }
            let unwrapped: KeySealing.Unwrapped
            do throws(KeySealing.Failure) {
                unwrapped = try sealing.unwrap(wrapped, passcode: passcode)
            } catch {
                switch error {
                case .wrongPasscode: return .wrong(sealing.status(of: wrapped, warning: nil))
                case .refused(let reason): return .refused(reason, sealing.status(of: wrapped, warning: nil))
                }
            }
            let master = unwrapped.master
            guard let rewrapTo else {
                let status = sealing.status(of: wrapped, warning: nil)
                // A container of derived app keys: its app keys wrapped and the master key
                // re-wrapped in the current format, in one transaction, before the key is used.
                guard let upgraded = unwrapped.upgraded else { return .correct(master, nil, status) }
                do {
                    let keys = try migration.migrate(master: master, keystore: upgraded)
                    return .correct(master, upgraded, status, migratedAppKeys: keys)
                } catch {
                    master.zero()
                    throw error
                }
            }
            defer { master.zero() }
            // Re-sealed with a fresh salt and a new TPM object, under the policy in force now.
            var kdf = wrapped.kdf
            kdf.salt = custody.makeSalt()
            let (rewrapped, warning) = try sealing.wrap(
                master, passcode: rewrapTo, kdf: kdf, recovery: wrapped.recovery)
            if let refusal = softwareRules.problem(with: rewrapTo, wrapped: rewrapped) {
                return .newPasscodeRefused(refusal)
            }
            var migrated: [String: [UInt8]]?
            if unwrapped.upgraded != nil {
                migrated = try migration.migrate(master: master, keystore: rewrapped)
            } else {
                try database.saveWrappedKey(rewrapped, now: Date().timeIntervalSince1970)
            }
            return .correct(nil, rewrapped, sealing.status(of: rewrapped, warning: warning), migratedAppKeys: migrated)
        }
        job.assumeIsolated().whenComplete { [self] result in
            finishCheck(result, unlocking: work == .checkPasscode && host.lifecycle.pending == .unlock)
        }
    }

    func finishCheck(_ result: Result<CheckResult, any Error>, unlocking: Bool) {
        let now = host.clock()
        switch result {
        case .success(.counterNotStored(let reason)):
            logger.error("passcode check refused: the attempt counter could not be stored: \(reason)")
            host.run(.checkAborted(now: now))
        case .success(.wrong(let protection)):
            keyProtection = protection ?? keyProtection
            logger.notice("wrong passcode", metadata: ["failedAttempts": "\(host.lifecycle.failedAttempts)"])
            host.run(.passcodeChecked(correct: false, now: now))
        case .success(.refused(let error, let protection)):
            keyProtection = protection ?? keyProtection
            logger.error("passcode check refused: \(error.varlinkName) \(error.varlinkParameters)")
            // The typed answer goes first; the attempt stays counted (an aborted check never gives one back).
            failPending(error)
            host.run(.checkAborted(now: now))
        case .success(.correct(let key, let rewrapped, let protection, let migrated)):
            keyProtection = protection ?? keyProtection
            if let migrated { appKeysMigrated(migrated) }
            if let rewrapped {
                wrappedKey = rewrapped
                if key == nil {
                    logger.notice(
                        "passcode changed; the master key is re-wrapped",
                        metadata: ["protection": "\(rewrapped.protection)"])
                }
            }
            // Installed only if the machine answers with `installKey`; zeroed otherwise.
            if let key {
                if unlocking && !host.isShuttingDown { candidateKey = key } else { key.zero() }
            }
            // A passcode unlock (re)arms fingerprint unlock at its `DidUnlock` (`BiometricsComponent`).
            biometrics.passcodeUnlocking = unlocking
            host.run(.passcodeChecked(correct: true, now: now))
            biometrics.passcodeUnlocking = false
        case .success(.recovered(let rewrapped, let recoveryKey, let protection, let migrated)):
            keyProtection = protection ?? keyProtection
            if let migrated { appKeysMigrated(migrated) }
            wrappedKey = rewrapped
            // The new key goes only to the caller: never to the log or the audit.
            if let encoder = pending?.encoder {
                pending?.successReply = encoder.reply(RecoverReply(recoveryKey: recoveryKey))
            }
            logger.notice(
                "restored with the recovery key; the master key is re-wrapped and a new recovery key made",
                metadata: ["protection": "\(rewrapped.protection)"])
            host.run(.passcodeChecked(correct: true, now: now))
        case .success(.newPasscodeRefused(let refusal)):
            // The current passcode (or recovery key) was right; the new passcode is refused and nothing stored.
            failPending(refusal)
            host.run(.passcodeChecked(correct: true, now: now))
        case .success(.wrongRecoveryKey):
            logger.notice("wrong recovery key", metadata: ["failedAttempts": "\(host.lifecycle.failedAttempts)"])
            let left = max(0, host.lifecycle.configuration.maxAttempts - host.lifecycle.failedAttempts)
            // Answered as the typed error first; the machine counts it as a wrong passcode.
            failPending(.invalidRecoveryKey(reason: "it does not open the stored key (\(left) attempts left)"))
            host.run(.passcodeChecked(correct: false, now: now))
        case .failure(let error):
            logger.error("passcode check failed: \(error)")
            if let error = error as? CordonError { failPending(error) }
            host.run(.checkAborted(now: now))
        }
    }

    /// Answers the pending request with `error` (the machine's own answer then finds none).
    func failPending(_ error: CordonError) {
        guard let pending else { return }
        self.pending = nil
        pending.promise.succeed(pending.encoder.error(error.varlinkError))
    }

    /// Creates the master key, tunes scrypt and stores the wrapped key, off the loop.
    func startCreate(request: LifecycleRequest?) {
        guard let request, let passcode = request.passcode else {
            host.run(.initializeFinished(success: false, now: host.clock()))
            return
        }
        pending = PendingRequest(
            promise: request.promise, passcode: passcode, newPasscode: nil, encoder: request.encoder)
        let database = host.database
        let custody = self.custody
        let sealing = keySealing
        let insecure = host.configuration.insecureFastKDF
        let softwareRules = softwareOnlyRules
        let tuner = KDFTuner(targetSeconds: host.configuration.kdfTargetSeconds)
        host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CreateResult in
            let master = custody.makeMasterKey()
            defer { master.zero() }
            let salt = custody.makeSalt()
            let kdf =
                insecure
                ? KDFParameters.insecureFast(salt: salt)
                : try tuner.tune(salt: salt) { candidate in
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = try custody.wrap(master, passcode: "calibration", kdf: candidate)
                    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                }
            // The recovery key also unwraps the master key; it leaves the agent once, in the reply.
            let recoveryKey = RecoveryKey.generate()
            defer { recoveryKey.secret.zero() }
            let recovery = try custody.wrapForRecovery(master, recoveryKey: recoveryKey.secret)
            let (wrapped, warning) = try sealing.wrap(master, passcode: passcode, kdf: kdf, recovery: recovery)
            if let refusal = softwareRules.problem(with: passcode, wrapped: wrapped) { throw refusal }
            try database.saveWrappedKey(wrapped, now: Date().timeIntervalSince1970)
            try database.saveAttempts(count: 0, lastFailureAt: nil)
            return CreateResult(
                wrapped: wrapped, protection: sealing.status(of: wrapped, warning: warning),
                recoveryKey: recoveryKey.formatted)
        }.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let created):
                wrappedKey = created.wrapped
                keyProtection = created.protection
                if let encoder = pending?.encoder {
                    pending?.successReply = encoder.reply(InitializeReply(recoveryKey: created.recoveryKey))
                }
                if let warning = created.protection?.warning { logger.warning("\(warning)") }
                logger.notice(
                    "container initialized",
                    metadata: [
                        "kdf":
                            "scrypt N=\(created.wrapped.kdf.rounds) r=\(created.wrapped.kdf.blockSize) p=\(created.wrapped.kdf.parallelism)",
                        "protection": "\(created.wrapped.protection.rawValue)",
                    ])
                host.run(.initializeFinished(success: true, now: host.clock()))
            case .failure(let error):
                logger.error("could not initialize the keystore: \(error)")
                if let error = error as? CordonError { failPending(error) }
                host.run(.initializeFinished(success: false, now: host.clock()))
            }
        }
    }

    /// Reads what protects the stored key and the TPM's lockout state off the loop, then keeps it
    /// for `status` (at start; checks refresh it as they go).
    func refreshKeyProtection() {
        let wrapped = wrappedKey
        let sealing = keySealing
        let warning = keyProtection?.warning
        host.storePool.runIfActive(eventLoop: host.loop) { sealing.status(of: wrapped, warning: warning) }
            .assumeIsolated().whenSuccess { [self] status in keyProtection = status }
    }
}

/// A created keystore record and what protects it.
struct CreateResult: Sendable {
    let wrapped: WrappedKey
    let protection: KeyProtectionStatus?
    /// The recovery key, formatted for the reply only.
    let recoveryKey: String
}

/// The outcome of a passcode check run off the loop, with the key's protection read after it.
///
/// `@unchecked` because `SecureBytes` is a mutable class: the pool's work creates the key and
/// hands it over in the future's result without keeping a reference, so only the loop touches
/// it afterwards.
enum CheckResult: @unchecked Sendable {
    case counterNotStored(String)
    case wrong(KeyProtectionStatus?)
    /// Refused before the passcode could be checked (the TPM locked out, cleared, unreachable).
    case refused(CordonError, KeyProtectionStatus?)
    /// The unwrapped master key (unlock) and the re-wrapped record (passcode change, or the
    /// migration of a container of derived app keys, with every wrapped app key stored after it).
    case correct(SecureBytes?, WrappedKey?, KeyProtectionStatus?, migratedAppKeys: [String: [UInt8]]? = nil)
    /// Restored with the recovery key: the re-wrapped record and the new recovery key, formatted
    /// (and, for a recovery wrapping of before random app keys, the app keys after the migration).
    case recovered(WrappedKey, String, KeyProtectionStatus?, migratedAppKeys: [String: [UInt8]]? = nil)
    /// The recovery key does not open the stored key (counted like a wrong passcode).
    case wrongRecoveryKey
    /// The check passed, but the new passcode breaks the rules for a key only software protects.
    case newPasscodeRefused(CordonError)
}
