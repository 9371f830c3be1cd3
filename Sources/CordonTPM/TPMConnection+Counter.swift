import CCordonTPM
import CordonSecrets

/// NV monotonic counters (TPM 2.0 Part 1, "NV Counter Index"): a value the TPM only ever raises,
/// which anchors the agent's security state (docs/ARCHITECTURE.md, "State anchor").
extension TPMConnection {
    /// TPM_RC_NV_DEFINED: the index is taken.
    static let nvDefined: UInt32 = 0x14C

    /// Defines counter `index` with `authorization` for reads and increments and brings it to its
    /// first value; throws `.indexTaken` when the index is defined already.
    public func defineCounter(index: UInt32, authorization: SecureBytes) throws(TPMCounterError) {
        let code = authorization.withUnsafeBytes { auth in
            cordon_tpm_nv_counter_define(context, index, auth.bytes, auth.count)
        }
        guard code == 0 else {
            if TPMError.tpmCode(code) == Self.nvDefined { throw .indexTaken }
            throw .tpm(TPMError.classify(code))
        }
    }

    /// Raises counter `index` by one.
    public func incrementCounter(index: UInt32, authorization: SecureBytes) throws(TPMError) {
        let code = authorization.withUnsafeBytes { auth in
            cordon_tpm_nv_counter_increment(context, index, auth.bytes, auth.count)
        }
        guard code == 0 else { throw TPMError.classify(code) }
    }

    /// Counter `index`'s value.
    public func readCounter(index: UInt32, authorization: SecureBytes) throws(TPMError) -> UInt64 {
        var value: UInt64 = 0
        let code = authorization.withUnsafeBytes { auth in
            cordon_tpm_nv_counter_read(context, index, auth.bytes, auth.count, &value)
        }
        guard code == 0 else { throw TPMError.classify(code) }
        return value
    }

    /// Removes NV index `index` (owner authorization).
    public func undefine(index: UInt32) throws(TPMError) {
        let code = cordon_tpm_nv_undefine(context, index)
        guard code == 0 else { throw TPMError.classify(code) }
    }
}

/// Why defining a counter failed.
public enum TPMCounterError: Error, Sendable, Equatable {
    /// The index is defined already (by another container or program): pick another.
    case indexTaken
    case tpm(TPMError)
}
