/// A secret sealed by the TPM, as stored: the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE of the
/// keyed-hash object (the private part encrypted under the TPM's storage primary, so useless
/// without that TPM) and the PCRs its policy binds it to.
public struct TPMSealedObject: Sendable, Equatable {
    public var publicBlob: [UInt8]
    public var privateBlob: [UInt8]
    /// PCR indices of the SHA-256 bank; empty when the policy is PolicyAuthValue alone.
    public var pcrs: [Int]

    public init(publicBlob: [UInt8], privateBlob: [UInt8], pcrs: [Int]) {
        self.publicBlob = publicBlob
        self.privateBlob = privateBlob
        self.pcrs = pcrs
    }
}

/// The TPM's dictionary-attack state (TPM2_GetCapability, TPM_PT_PERMANENT and TPM_PT_LOCKOUT_*).
public struct TPMLockoutState: Sendable, Equatable, Codable {
    /// Failed authorizations the TPM currently counts (TPM_PT_LOCKOUT_COUNTER).
    public var failures: Int
    /// Failures that put the TPM in lockout (TPM_PT_MAX_AUTH_FAIL).
    public var maxFailures: Int
    /// Seconds after which one failure is forgotten (TPM_PT_LOCKOUT_INTERVAL).
    public var intervalSeconds: Int
    /// Seconds the lockout hierarchy stays locked after a failed lockout authorization
    /// (TPM_PT_LOCKOUT_RECOVERY).
    public var lockoutRecoverySeconds: Int
    /// Whether the TPM is in lockout now (TPMA_PERMANENT inLockout).
    public var inLockout: Bool

    public init(failures: Int, maxFailures: Int, intervalSeconds: Int, lockoutRecoverySeconds: Int, inLockout: Bool) {
        self.failures = failures
        self.maxFailures = maxFailures
        self.intervalSeconds = intervalSeconds
        self.lockoutRecoverySeconds = lockoutRecoverySeconds
        self.inLockout = inLockout
    }

    /// Wrong passcodes the TPM accepts before it locks out.
    public var attemptsLeft: Int { inLockout ? 0 : max(0, maxFailures - failures) }

    /// Seconds until the TPM accepts one more attempt: one failure is forgotten per interval, so a
    /// TPM in lockout leaves it one interval after its last failure at the latest. 0 when not locked out.
    public var retryAfterSeconds: Int { inLockout ? intervalSeconds : 0 }
}
