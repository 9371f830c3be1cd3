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
        /// Refused with a typed error; the attempt stays counted (the TPM failed in a way that does
        /// not prove it left the passcode unevaluated).
        case refused(CordonError)
        /// The TPM refused before it evaluated the passcode (the bound PCRs changed, lockout, no
        /// TPM, the sealed object not loaded): no guess was made, so the attempt is given back.
        case notEvaluated(CordonError)
    }

    /// Wraps `master` under `passcode`: sealed by the TPM when the policy allows and one is usable.
    /// Returns the record and, when the policy prefers a TPM and none is usable, the warning.
    /// `anchorIndex` binds the record to the state anchor (`WrappedKey.anchorIndex`).
    func wrap(
        _ master: SecureBytes, passcode: String, kdf: KDFParameters, recovery: [UInt8]?, anchorIndex: UInt32?
    ) throws -> (WrappedKey, String?) {
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
                var wrapped = try custody.wrap(
                    master, stretched: stretched, hardwareSecret: secret, kdf: kdf, anchorIndex: anchorIndex)
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
        var wrapped = try custody.wrap(
            master, stretched: stretched, hardwareSecret: nil, kdf: kdf, anchorIndex: anchorIndex)
        wrapped.recovery = recovery
        return (wrapped, warning)
    }

    /// An unwrapped master key, and what its record says of the container's app keys.
    ///
    /// `@unchecked` because `SecureBytes` is a mutable class: made on the pool and handed over whole.
    struct Unwrapped: @unchecked Sendable {
        let master: SecureBytes
        let format: KeystoreFormat
        /// For a record of derived app keys, or one to bind to a new state anchor: the same record
        /// re-wrapped in the current format (and with the anchor), with the same wrapping key (the
        /// same stretched passcode and TPM secret: no new TPM object), for `AppKeyMigration` or the
        /// anchor's establishment to store.
        let upgraded: WrappedKey?
    }

    /// Unwraps the master key with `passcode`, through the TPM when one seals it; once it opened,
    /// `rebind` may name a state anchor to bind the record to (a container made before anchors),
    /// and the record comes back re-wrapped with it (`Unwrapped.upgraded`).
    func unwrap(_ wrapped: WrappedKey, passcode: String, rebind: (() -> UInt32?)? = nil) throws(Failure)
        -> Unwrapped
    {
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
                throw Self.failure(error, pcrs: seal.pcrs, tpm: { try? TPMConnection(tcti: tcti).lockoutState() })
            }
        }
        let opened: (key: SecureBytes, format: KeystoreFormat)
        do {
            opened = try custody.unwrapReportingFormat(wrapped, stretched: stretched, hardwareSecret: secret)
        } catch {
            throw .wrongPasscode
        }
        let anchorIndex = rebind?() ?? wrapped.anchorIndex
        guard opened.format != .current || anchorIndex != wrapped.anchorIndex else {
            return Unwrapped(master: opened.key, format: opened.format, upgraded: nil)
        }
        do {
            var upgraded = try custody.wrap(
                opened.key, stretched: stretched, hardwareSecret: secret, kdf: wrapped.kdf, anchorIndex: anchorIndex)
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

    /// What `status` says, and an unlock answers, when the PCRs the key is bound to changed.
    static func pcrProblem(_ pcrs: [Int]) -> String {
        "the PCRs the key is bound to (\(pcrs.map(String.init).joined(separator: ","))) have changed since it was "
            + "sealed (a firmware or boot-configuration update): unlock will be refused until they return; "
            + "restore with the recovery key, `cordon init --recovery`"
    }

    /// The typed outcome of a TPM failure while unsealing. Only `authorizationFailed` means the TPM
    /// evaluated the passcode; the refusals it makes before that are `notEvaluated` (never counted),
    /// and any other failure is `refused` (counted: nothing proves the passcode went unevaluated).
    static func failure(_ error: TPMError, pcrs: [Int], tpm lockout: () -> TPMLockoutState?) -> Failure {
        switch error {
        case .authorizationFailed: return .wrongPasscode
        case .lockedOut:
            return .notEvaluated(
                .hardwareLockedOut(retryAfterSeconds: Double(lockout()?.retryAfterSeconds ?? 0)))
        case .policyMismatch:
            return .notEvaluated(.hardwareKeyRejected(reason: pcrProblem(pcrs)))
        case .objectRejected(let reason):
            return .notEvaluated(
                .hardwareKeyRejected(
                    reason:
                        "this TPM did not seal it or was cleared (\(reason)); restore with `cordon init --recovery`"))
        case .unavailable(let reason): return .notEvaluated(.hardwareUnavailable(reason: reason))
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
                let object = TPMSealedObject(
                    publicBlob: seal.publicBlob, privateBlob: seal.privateBlob, pcrs: seal.pcrs)
                // Loading needs no authorization and counts nothing against the lockout.
                try tpm.checkLoads(object)
                // A trial session's digest over the PCRs as they are now, against the sealed policy:
                // a mismatch is seen before any unlock (and costs no attempt).
                if !seal.pcrs.isEmpty {
                    let matches = try tpm.policyMatches(object)
                    if !matches { status.problem = Self.pcrProblem(seal.pcrs) }
                }
            }
        } catch .objectRejected(_) {
            status.problem = Self.clearedProblem
        } catch {
            status.problem = error.description
        }
        return status
    }
}
