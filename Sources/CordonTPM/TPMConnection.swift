import CCordonTPM
import CordonSecrets

/// One open connection to a TPM 2.0 through the TPM Software Stack (docs/ARCHITECTURE.md,
/// "Module map": CordonTPM). Opened from a TCTI configuration string; closed when released.
///
/// Not `Sendable`: an ESYS context is used from one thread (the agent opens one per operation on
/// its store pool). Every object and session an operation loads is flushed before it returns.
public final class TPMConnection {
    /// The kernel's resource-managed TPM device.
    public static let defaultTCTI = "device:/dev/tpmrm0"

    let context: OpaquePointer
    /// The TCTI configuration it was opened with.
    public let tcti: String

    /// Opens the TPM at `tcti` (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`).
    public init(tcti: String = TPMConnection.defaultTCTI) throws(TPMError) {
        var handle: OpaquePointer?
        let code = cordon_tpm_open(tcti, &handle)
        guard code == 0, let handle else { throw .unavailable("\(tcti): \(TPMError.text(code))") }
        context = handle
        self.tcti = tcti
    }

    deinit { cordon_tpm_close(context) }

    /// Seals `secret` under `authorization` (the object's authValue, at most 32 bytes), bound to
    /// `pcrs` of the SHA-256 bank as they are now when any are given.
    public func seal(_ secret: SecureBytes, authorization: SecureBytes, pcrs: [Int]) throws(TPMError)
        -> TPMSealedObject
    {
        guard pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw .failed(code: 0, "PCR indices must be 0 to 23, not \(pcrs)")
        }
        let indices = pcrs.map { UInt32($0) }
        var publicBlob = [UInt8](repeating: 0, count: Int(CORDON_TPM_BLOB_MAX))
        var privateBlob = [UInt8](repeating: 0, count: Int(CORDON_TPM_BLOB_MAX))
        var publicLength = 0
        var privateLength = 0
        let code = secret.withUnsafeBytes { secretBytes in
            authorization.withUnsafeBytes { authBytes in
                cordon_tpm_seal(
                    context, authBytes.bytes, authBytes.count, secretBytes.bytes, secretBytes.count,
                    indices, indices.count, &publicBlob, &publicLength, &privateBlob, &privateLength)
            }
        }
        guard code == 0 else { throw TPMError.classify(code) }
        return TPMSealedObject(
            publicBlob: Array(publicBlob[..<publicLength]), privateBlob: Array(privateBlob[..<privateLength]),
            pcrs: pcrs)
    }

    /// Unseals `object` with `authorization`. A wrong authorization throws `.authorizationFailed` and
    /// counts against the TPM's lockout; a TPM in lockout throws `.lockedOut`.
    public func unseal(_ object: TPMSealedObject, authorization: SecureBytes) throws(TPMError) -> SecureBytes {
        let indices = object.pcrs.map { UInt32(clamping: $0) }
        var stage: Int32 = 0
        var length = 0
        var failure: UInt32 = 0
        let secret = SecureBytes(count: Int(CORDON_TPM_SECRET_MAX)) { output in
            failure = authorization.withUnsafeBytes { authBytes in
                cordon_tpm_unseal(
                    context, authBytes.bytes, authBytes.count, object.publicBlob, object.publicBlob.count,
                    object.privateBlob, object.privateBlob.count, indices, indices.count,
                    output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    &length, &stage)
            }
        }
        defer { secret.zero() }
        guard failure == 0 else {
            switch Int(stage) {
            case Int(CORDON_TPM_STAGE_BLOBS.rawValue), Int(CORDON_TPM_STAGE_LOAD.rawValue):
                if TPMError.tpmCode(failure) == TPMError.lockout { throw .lockedOut }
                throw .objectRejected(TPMError.text(failure))
            default:
                throw TPMError.classify(failure)
            }
        }
        return secret.withUnsafeBytes { SecureBytes(copying: $0.prefix(length)) }
    }

    /// Throws `.objectRejected` when this TPM no longer loads `object` (cleared or replaced); needs
    /// no authorization and counts nothing against the lockout.
    public func checkLoads(_ object: TPMSealedObject) throws(TPMError) {
        let code = cordon_tpm_load_check(
            context, object.publicBlob, object.publicBlob.count, object.privateBlob, object.privateBlob.count)
        guard code == 0 else {
            if TPMError.tpmCode(code) == TPMError.lockout { throw .lockedOut }
            throw .objectRejected(TPMError.text(code))
        }
    }

    /// Whether `object`'s policy holds now: the digest a trial session gives for its PCRs with their
    /// current values (PolicyPCR then PolicyAuthValue, as sealed) equals the sealed authPolicy.
    /// False when a bound PCR changed since it was sealed. Needs no authorization; counts nothing.
    public func policyMatches(_ object: TPMSealedObject) throws(TPMError) -> Bool {
        guard object.pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw .failed(code: 0, "PCR indices must be 0 to 23, not \(object.pcrs)")
        }
        let indices = object.pcrs.map { UInt32($0) }
        var matches: Int32 = 0
        let code = cordon_tpm_policy_check(
            context, object.publicBlob, object.publicBlob.count, indices, indices.count, &matches)
        guard code == 0 else { throw TPMError.classify(code) }
        return matches != 0
    }

    /// The dictionary-attack state.
    public func lockoutState() throws(TPMError) -> TPMLockoutState {
        var state = cordon_tpm_da_state()
        let code = cordon_tpm_da_state_read(context, &state)
        guard code == 0 else { throw TPMError.classify(code) }
        return TPMLockoutState(
            failures: Int(state.lockout_counter), maxFailures: Int(state.max_auth_fail),
            intervalSeconds: Int(state.lockout_interval), lockoutRecoverySeconds: Int(state.lockout_recovery),
            inLockout: state.in_lockout != 0)
    }

    /// PCR `index` of the SHA-256 bank.
    public func readPCR(_ index: Int) throws(TPMError) -> [UInt8] {
        guard (0..<24).contains(index) else { throw .failed(code: 0, "PCR index must be 0 to 23, not \(index)") }
        var digest = [UInt8](repeating: 0, count: 32)
        let code = cordon_tpm_pcr_read(context, UInt32(index), &digest)
        guard code == 0 else { throw TPMError.classify(code) }
        return digest
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes as the C glue takes them.
    var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
