import CCordonTPM

/// Why a TPM operation failed, classified from the TSS response code.
public enum TPMError: Error, Sendable, Equatable {
    /// No TPM answers at the configured TCTI (none present, no access, simulator not running).
    case unavailable(String)
    /// The authValue is wrong (the passcode): the TPM counted it against its lockout.
    case authorizationFailed
    /// The TPM is in dictionary-attack lockout and refuses authorizations until it recovers.
    case lockedOut
    /// The PCRs the object is bound to no longer hold the values it was sealed with.
    case policyMismatch
    /// The TPM refuses the sealed object: it was made by another TPM, or this one was cleared.
    case objectRejected(String)
    /// Any other failure, with the TSS's code and text.
    case failed(code: UInt32, String)

    /// The TSS's description of `code`.
    static func text(_ code: UInt32) -> String {
        cordon_tpm_rc_text(code).map { String(cString: $0) } ?? String(format: "0x%08x", code)
    }

    /// The TPM's own response code within a TSS code, without handle, session and parameter
    /// numbers; nil for a code from a TSS layer (TCTI, ESYS, marshalling).
    static func tpmCode(_ code: UInt32) -> UInt32? {
        guard code >> 16 == 0 else { return nil }
        let base = code & 0xFFFF
        // Format one (bit 7): the error number is the low six bits.
        if base & 0x80 != 0 { return 0x80 | (base & 0x3F) }
        return base & 0x97F
    }

    /// TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH, TPM_RC_POLICY_FAIL, TPM_RC_PCR_CHANGED and TPM_RC_LOCKOUT.
    static let authFail: UInt32 = 0x08E
    static let badAuth: UInt32 = 0x0A2
    static let policyFail: UInt32 = 0x09D
    static let pcrChanged: UInt32 = 0x128
    static let lockout: UInt32 = 0x921

    /// Classifies a failed call's code.
    static func classify(_ code: UInt32) -> TPMError {
        switch tpmCode(code) {
        case authFail, badAuth: return .authorizationFailed
        case lockout: return .lockedOut
        case policyFail, pcrChanged: return .policyMismatch
        default: return .failed(code: code, text(code))
        }
    }
}

extension TPMError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unavailable(let reason): return "no TPM: \(reason)"
        case .authorizationFailed: return "the TPM refused the authorization (wrong passcode)"
        case .lockedOut: return "the TPM is in dictionary-attack lockout"
        case .policyMismatch: return "the PCRs the key is bound to have changed"
        case .objectRejected(let reason): return "the TPM refuses the sealed key (cleared or replaced?): \(reason)"
        case .failed(let code, let text): return String(format: "TPM error 0x%08x: ", code) + text
        }
    }
}
