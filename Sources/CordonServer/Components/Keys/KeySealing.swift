import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonTPM
import Foundation

/// Wraps and unwraps the master key with the protection the policy asks for (docs/ARCHITECTURE.md,
/// "Keys"): with a TPM, the wrapping key also needs a secret the TPM unseals only with the
/// passcode (so the TPM's dictionary-attack lockout limits guesses); without one, scrypt alone.
///
/// Runs on the store pool: it opens the TPM for each operation and closes it afterwards.
struct KeySealing: Sendable {
    let custody: KeyCustody
    /// The TCTI configuration of the TPM (`device:/dev/tpmrm0` unless test mode says otherwise).
    let tcti: String
    /// `passcode.hardware` and `passcode.pcrs` as the policy sets them now.
    let hardware: PasscodeHardware
    let pcrs: [Int]

    /// A passcode check's outcome other than success.
    enum Failure: Error {
        /// The passcode is wrong (the TPM counted it, where one seals the key).
        case wrongPasscode
        /// Refused with a typed error before the passcode could be checked.
        case refused(CordonError)
    }

    /// Wraps `master` under `passcode`: sealed by the TPM when the policy allows and one is usable.
    /// Returns the record and, when the policy prefers a TPM and none is usable, the warning.
    func wrap(_ master: SecureBytes, passcode: String, kdf: KDFParameters, recovery: [UInt8]?) throws
        -> (WrappedKey, String?)
    {
        let stretched = try custody.stretch(passcode: passcode, kdf: kdf)
        defer { stretched.zero() }
        var warning: String?
        if hardware != .off {
            do {
                let tpm = try TPMConnection(tcti: tcti)
                let secret = custody.makeSecret()
                defer { secret.zero() }
                let authorization = custody.hardwareAuthorization(stretched: stretched)
                defer { authorization.zero() }
                let object = try tpm.seal(secret, authorization: authorization, pcrs: pcrs)
                var wrapped = try custody.wrap(master, stretched: stretched, hardwareSecret: secret, kdf: kdf)
                wrapped.protection = pcrs.isEmpty ? .tpm : .tpmWithPCRs
                wrapped.hardware = HardwareSeal(
                    publicBlob: object.publicBlob, privateBlob: object.privateBlob, pcrs: object.pcrs)
                wrapped.recovery = recovery
                return (wrapped, nil)
            } catch let error as TPMError {
                if hardware == .required { throw CordonError.hardwareRequired(reason: error.description) }
                warning = "no TPM protects the key (\(error.description)): the passcode alone does"
            }
        }
        var wrapped = try custody.wrap(master, stretched: stretched, hardwareSecret: nil, kdf: kdf)
        wrapped.recovery = recovery
        return (wrapped, warning)
    }

    /// An unwrapped master key, and what its record says of the container's app keys.
    ///
    /// `@unchecked` because `SecureBytes` is a mutable class: made on the pool and handed over whole.
    struct Unwrapped: @unchecked Sendable {
        let master: SecureBytes
        let format: KeystoreFormat
        /// For a record of derived app keys: the same record re-wrapped in the current format, with
        /// the same wrapping key (the same stretched passcode and TPM secret: no new TPM object),
        /// for `AppKeyMigration` to store with the app keys.
        let upgraded: WrappedKey?
    }

    /// Unwraps the master key with `passcode`, through the TPM when one seals it.
    func unwrap(_ wrapped: WrappedKey, passcode: String) throws(Failure) -> Unwrapped {
        let stretched: SecureBytes
        do {
            stretched = try custody.stretch(passcode: passcode, kdf: wrapped.kdf)
        } catch {
            throw .refused(.internalError(reason: "the passcode could not be derived: \(error)"))
        }
        defer { stretched.zero() }
        var secret: SecureBytes?
        defer { secret?.zero() }
        if wrapped.protection != .software, let seal = wrapped.hardware {
            let authorization = custody.hardwareAuthorization(stretched: stretched)
            defer { authorization.zero() }
            do throws(TPMError) {
                let tpm = try TPMConnection(tcti: tcti)
                secret = try tpm.unseal(
                    TPMSealedObject(publicBlob: seal.publicBlob, privateBlob: seal.privateBlob, pcrs: seal.pcrs),
                    authorization: authorization)
            } catch {
                throw Self.failure(error, tpm: { try? TPMConnection(tcti: tcti).lockoutState() })
            }
        }
        let opened: (key: SecureBytes, format: KeystoreFormat)
        do {
            opened = try custody.unwrapReportingFormat(wrapped, stretched: stretched, hardwareSecret: secret)
        } catch {
            throw .wrongPasscode
        }
        guard opened.format != .current else {
            return Unwrapped(master: opened.key, format: opened.format, upgraded: nil)
        }
        do {
            var upgraded = try custody.wrap(opened.key, stretched: stretched, hardwareSecret: secret, kdf: wrapped.kdf)
            upgraded.protection = wrapped.protection
            upgraded.hardware = wrapped.hardware
            upgraded.recovery = wrapped.recovery
            return Unwrapped(master: opened.key, format: opened.format, upgraded: upgraded)
        } catch {
            opened.key.zero()
            throw .refused(.internalError(reason: "the key could not be re-wrapped: \(error)"))
        }
    }

    /// What `status` says when the TPM no longer loads the sealed key.
    static let clearedProblem =
        "this TPM does not load the sealed key (the TPM was cleared or replaced, or the database comes from another "
        + "machine): restore with the recovery key, `cordon init --recovery`"

    /// The typed outcome of a TPM failure while unsealing.
    static func failure(_ error: TPMError, tpm lockout: () -> TPMLockoutState?) -> Failure {
        switch error {
        case .authorizationFailed: return .wrongPasscode
        case .lockedOut:
            return .refused(.hardwareLockedOut(retryAfterSeconds: Double(lockout()?.retryAfterSeconds ?? 0)))
        case .policyMismatch:
            return .refused(.hardwareKeyRejected(reason: "the PCRs the key is bound to have changed"))
        case .objectRejected(let reason):
            return .refused(
                .hardwareKeyRejected(
                    reason:
                        "this TPM did not seal it or was cleared (\(reason)); restore with `cordon init --recovery`"))
        case .unavailable(let reason): return .refused(.hardwareUnavailable(reason: reason))
        case .failed: return .refused(.hardwareUnavailable(reason: error.description))
        }
    }

    /// What protects `wrapped` and the TPM's lockout state, read from the TPM.
    func status(of wrapped: WrappedKey?, warning: String?) -> KeyProtectionStatus? {
        guard let wrapped else { return nil }
        var status = KeyProtectionStatus(kind: wrapped.protection.rawValue, warning: warning)
        guard wrapped.protection != .software else {
            // The policy wants a TPM and none seals the key: said until a passcode change re-seals.
            if hardware != .off && warning == nil {
                status.warning =
                    "no TPM protects the key: the passcode alone does (passcode.hardware: \(hardware.rawValue))"
            }
            return status
        }
        status.pcrs = wrapped.hardware?.pcrs
        do throws(TPMError) {
            let tpm = try TPMConnection(tcti: tcti)
            let state = try tpm.lockoutState()
            status.attemptsLeft = state.attemptsLeft
            status.maxFailures = state.maxFailures
            status.inLockout = state.inLockout
            status.retryAfterSeconds = Double(state.retryAfterSeconds)
            if let seal = wrapped.hardware {
                // Loading needs no authorization and counts nothing against the lockout.
                try tpm.checkLoads(
                    TPMSealedObject(publicBlob: seal.publicBlob, privateBlob: seal.privateBlob, pcrs: seal.pcrs))
            }
        } catch .objectRejected(_) {
            status.problem = Self.clearedProblem
        } catch {
            status.problem = error.description
        }
        return status
    }
}
