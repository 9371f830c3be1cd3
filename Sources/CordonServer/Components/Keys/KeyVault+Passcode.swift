import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
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
        let wiping = host.lifecycle.pending == .wipe
        let keeper = anchorKeeper
        let migration = appKeyMigration
        let job = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CheckResult in
            // A state refused as rolled back opens nothing; only a wipe (with the passcode) goes on.
            if let refusal = Self.anchorRefusal(database, keeper: keeper, wrapped: wrapped, wiping: wiping) {
                return .notEvaluated(refusal, nil)
            }
            do {
                try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
            } catch is StateAnchorError where wiping {
                // A refused state takes no writes; the wipe that ends it goes on.
            } catch {
                return .counterNotStored(String(describing: error))
            }
            // A TPM-sealed container made before anchors gets one at its first unlock.
            var created: StateAnchor?
            let bindAnchor =
                rewrapTo == nil && wrapped.anchorIndex == nil && wrapped.protection != .software
                && database.attachedAnchor == nil && sealing.hardware != .off
            let unwrapped: KeySealing.Unwrapped
            do throws(KeySealing.Failure) {
                unwrapped = try sealing.unwrap(
                    wrapped, passcode: passcode,
                    rebind: bindAnchor
                        ? {
                            created = try? keeper.create()
                            return created?.reference.index
                        } : nil)
            } catch {
                switch error {
                case .wrongPasscode: return .wrong(sealing.status(of: wrapped, warning: nil))
                case .refused(let reason): return .refused(reason, sealing.status(of: wrapped, warning: nil))
                case .notEvaluated(let reason): return .notEvaluated(reason, sealing.status(of: wrapped, warning: nil))
                }
            }
            let master = unwrapped.master
            // The key opened although its anchor is gone from this TPM (the counter was removed):
            // the state is not trusted. Only the recovery key restores, under a new anchor.
            if let lost = Self.lostAnchor(database), !wiping {
                master.zero()
                if let created { keeper.remove(created.reference) }
                return .notEvaluated(.stateRolledBack(reason: lost.description), nil)
            }
            guard let rewrapTo else {
                let status = sealing.status(of: wrapped, warning: nil)
                guard let upgraded = unwrapped.upgraded else { return .correct(master, nil, status) }
                // A container of derived app keys: its app keys wrapped and the master key re-wrapped
                // in the current format (and bound to a new anchor), in one transaction, before the
                // key is used. A container made before anchors: the record bound to its new anchor.
                do {
                    if unwrapped.format != .current {
                        let keys = try migration.migrate(master: master, keystore: upgraded, anchor: created)
                        return .correct(master, upgraded, status, migratedAppKeys: keys)
                    }
                    if let created {
                        try database.saveWrappedKey(upgraded, now: Date().timeIntervalSince1970, anchor: created)
                        return .correct(master, upgraded, status)
                    }
                    return .correct(master, nil, status)
                } catch {
                    if let created { keeper.remove(created.reference) }
                    // The migration must hold before any key is used; a new anchor can wait.
                    guard unwrapped.format == .current else {
                        master.zero()
                        throw error
                    }
                    return .correct(master, nil, status)
                }
            }
            defer { master.zero() }
            // Re-sealed with a fresh salt and a new TPM object, under the policy in force now.
            var kdf = wrapped.kdf
            kdf.salt = custody.makeSalt()
            let (rewrapped, warning) = try sealing.wrap(
                master, passcode: rewrapTo, kdf: kdf, recovery: wrapped.recovery, anchorIndex: wrapped.anchorIndex)
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
            // The TPM's own figure, read after the check: the answer shows the tighter limit.
            host.run(.passcodeChecked(correct: false, now: now, hardwareAttemptsLeft: protection?.attemptsLeft))
        case .success(.refused(let error, let protection)):
            keyProtection = protection ?? keyProtection
            logger.error("passcode check refused: \(error.varlinkName) \(error.varlinkParameters)")
            // The typed answer goes first; the attempt stays counted (an aborted check never gives one back).
            failPending(error)
            host.run(.checkAborted(now: now))
        case .success(.notEvaluated(let error, let protection)):
            keyProtection = protection ?? keyProtection
            logger.error(
                "passcode check refused by the TPM before it evaluated the passcode; the attempt is not counted: \(error.varlinkName) \(error.varlinkParameters)"
            )
            // The machine gives the attempt back, stores the count, then answers with the typed error.
            host.run(.checkRefused(error, now: now))
        case .success(.correct(let key, let rewrapped, let protection, let migrated)):
            keyProtection = protection ?? keyProtection
            if let migrated { appKeysMigrated(migrated) }
            if let rewrapped {
                wrappedKey = rewrapped
                logger.notice(
                    key == nil
                        ? "passcode changed; the master key is re-wrapped"
                        : "the master key is re-wrapped (app keys migrated, or bound to the state anchor)",
                    metadata: ["protection": "\(rewrapped.protection)"])
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
            let configuration = host.lifecycle.configuration
            let left = max(0, configuration.maxAttempts - host.lifecycle.failedAttempts)
            // Answered as the typed error first; the machine counts it as a wrong passcode (and, at
            // the last attempt, applies the max-attempts action: the reason says so).
            failPending(
                .invalidRecoveryKey(reason: Self.recoveryKeyRefusal(left: left, action: configuration.onMaxAttempts)))
            host.run(.passcodeChecked(correct: false, now: now))
        case .failure(let error):
            logger.error("passcode check failed: \(error)")
            if let error = error as? CordonError { failPending(error) }
            host.run(.checkAborted(now: now))
        }
    }

    /// The refusal of a check while the state is refused (`StateRolledBack`); nil when it holds,
    /// for a wipe, and when the anchor's TPM is gone (`lostAnchor`: the key's own seal decides,
    /// and only the recovery key restores). A TPM that could not be reached earlier is asked again
    /// first. On the pool.
    static func anchorRefusal(
        _ database: CordonDatabase, keeper: StateAnchorKeeper, wrapped: WrappedKey, wiping: Bool
    ) -> CordonError? {
        switch database.anchorProblem {
        case nil: return nil
        case .unverified?, .counterFailed?: _ = keeper.attach(to: database, keystoreIndex: wrapped.anchorIndex)
        default: break
        }
        guard let problem = database.anchorProblem, !wiping else { return nil }
        if case .lost = problem { return nil }
        return .stateRolledBack(reason: problem.description)
    }

    /// The anchor's TPM no longer holds it (cleared or replaced): nil otherwise.
    static func lostAnchor(_ database: CordonDatabase) -> StateAnchorError? {
        if case .lost? = database.anchorProblem { return database.anchorProblem }
        return nil
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
        let keeper = anchorKeeper
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
            // The state's TPM anchor: a wiped container's, kept, or a new one where a TPM may be used.
            let kept = database.attachedAnchor
            var created: StateAnchor?
            var anchorWarning: String?
            if kept == nil && sealing.hardware != .off {
                do {
                    created = try keeper.create()
                } catch {
                    anchorWarning = "no TPM counter anchors the security state (\(error))"
                }
            }
            let anchor = kept ?? created
            let wrapped: WrappedKey
            var warning: String?
            do {
                (wrapped, warning) = try sealing.wrap(
                    master, passcode: passcode, kdf: kdf, recovery: recovery, anchorIndex: anchor?.reference.index)
                if let refusal = softwareRules.problem(with: passcode, wrapped: wrapped) { throw refusal }
                if let created {
                    try database.saveWrappedKey(wrapped, now: Date().timeIntervalSince1970, anchor: created)
                } else {
                    try database.saveWrappedKey(wrapped, now: Date().timeIntervalSince1970)
                }
            } catch {
                if let created { keeper.remove(created.reference) }
                throw error
            }
            if warning == nil, let anchorWarning { warning = anchorWarning }
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

extension KeyVault {
    /// Reads again, off the loop, what protects a TPM-sealed key (lockout state, whether the bound
    /// PCRs still hold their sealed values) and keeps it for `status`; completes once kept. Nil when
    /// no TPM seals the key (nothing to read) or a check is running (it refreshes it when it ends).
    func refreshedKeyProtection() -> EventLoopFuture<Void>? {
        guard pending == nil, let wrapped = wrappedKey, wrapped.protection != .software else { return nil }
        if protectionReader == nil { protectionReader = ProtectionReader() }
        guard let reader = protectionReader else { return nil }
        // Off the store pool, and shared by the calls that arrive while it runs (`ProtectionReader`).
        return reader.read(keySealing, wrapped, warning: keyProtection?.warning, on: host.loop)
            .assumeIsolated().map { [self] status in keyProtection = status }.nonisolated()
            .recover { _ in }
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
    /// Refused in a way that keeps the attempt counted (an unexpected TPM or derivation failure).
    case refused(CordonError, KeyProtectionStatus?)
    /// Refused by the TPM before it evaluated the passcode (the bound PCRs changed, lockout, no TPM,
    /// the sealed object not loaded), or by a state refused as rolled back: the attempt is given
    /// back (`LifecycleInput.checkRefused`).
    case notEvaluated(CordonError, KeyProtectionStatus?)
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
