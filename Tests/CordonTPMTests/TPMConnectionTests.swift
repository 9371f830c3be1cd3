import CordonSecrets
import CordonTPM
import Foundation
import Testing

/// The ESYS shell against a real TPM 2.0 simulator (swtpm), with `tpm2-tools` as the reference.
@Suite("CordonTPM against swtpm", .serialized)
struct TPMConnectionTests {
    static func bytes(_ value: UInt8, _ count: Int = 32) -> SecureBytes {
        SecureBytes(copying: [UInt8](repeating: value, count: count))
    }

    /// Runs `body` with a fresh simulator, stopped afterwards.
    func withSimulator(_ body: (SoftwareTPM) throws -> Void) throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        try body(simulator)
    }

    @Test func sealThenUnsealReturnsTheSecretOnlyWithItsAuthorization() throws {
        try withSimulator { simulator in
            let tpm = try TPMConnection(tcti: simulator.tcti)
            let secret = Self.bytes(0x5A)
            let object = try tpm.seal(secret, authorization: Self.bytes(1), pcrs: [])
            #expect(!object.publicBlob.isEmpty && !object.privateBlob.isEmpty)
            // The private blob is encrypted under the TPM's storage primary: the secret is not in it.
            #expect(!Data(object.privateBlob).contains(Data(repeating: 0x5A, count: 8)))
            let unsealed = try tpm.unseal(object, authorization: Self.bytes(1))
            #expect(unsealed.withUnsafeBytes { Array($0) } == [UInt8](repeating: 0x5A, count: 32))
            #expect(throws: TPMError.authorizationFailed) { try tpm.unseal(object, authorization: Self.bytes(2)) }
        }
    }

    @Test func wrongAuthorizationsCountAgainstTheLockoutUntilTheTPMLocksOut() throws {
        try withSimulator { simulator in
            try simulator.setLockout(maxTries: 3)
            let tpm = try TPMConnection(tcti: simulator.tcti)
            let object = try tpm.seal(Self.bytes(7), authorization: Self.bytes(1), pcrs: [])
            #expect(try tpm.lockoutState().attemptsLeft == 3)
            for tried in 1...3 {
                #expect(throws: TPMError.authorizationFailed) { try tpm.unseal(object, authorization: Self.bytes(9)) }
                // The reference tool sees the same counter.
                #expect(try simulator.variableProperty("TPM2_PT_LOCKOUT_COUNTER") == tried)
            }
            let state = try tpm.lockoutState()
            #expect(state.inLockout)
            #expect(state.attemptsLeft == 0)
            #expect(state.maxFailures == 3)
            #expect(state.intervalSeconds == 600)
            #expect(state.retryAfterSeconds == 600)
            // Locked out: even the right authorization is refused.
            #expect(throws: TPMError.lockedOut) { try tpm.unseal(object, authorization: Self.bytes(1)) }
            try simulator.tpm2("dictionarylockout", ["--clear-lockout"])
            #expect(try tpm.unseal(object, authorization: Self.bytes(1)).count == 32)
        }
    }

    @Test func aPCRBoundSealFailsOnceThePCRIsExtended() throws {
        try withSimulator { simulator in
            let tpm = try TPMConnection(tcti: simulator.tcti)
            let before = try tpm.readPCR(16)
            let object = try tpm.seal(Self.bytes(3), authorization: Self.bytes(1), pcrs: [16])
            #expect(try tpm.unseal(object, authorization: Self.bytes(1)).count == 32)
            try simulator.tpm2("pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
            #expect(try tpm.readPCR(16) != before)
            #expect(throws: TPMError.policyMismatch) { try tpm.unseal(object, authorization: Self.bytes(1)) }
            // A policy failure is not an authorization failure: the lockout counter is untouched.
            #expect(try tpm.lockoutState().failures == 0)
        }
    }

    /// Issue #27, case 6: the trial-session digest over the bound PCRs' current values matches the
    /// sealed policy until a PCR changes, and again once it is back; nothing is counted.
    @Test func thePolicyCheckSeesAPCRChangeBeforeAnyUnseal() throws {
        try withSimulator { simulator in
            let tpm = try TPMConnection(tcti: simulator.tcti)
            let bound = try tpm.seal(Self.bytes(3), authorization: Self.bytes(1), pcrs: [16])
            let unbound = try tpm.seal(Self.bytes(3), authorization: Self.bytes(1), pcrs: [])
            #expect(try tpm.policyMatches(bound))
            #expect(try tpm.policyMatches(unbound))
            try simulator.tpm2("pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
            #expect(try !tpm.policyMatches(bound))
            #expect(try tpm.policyMatches(unbound))
            try simulator.tpm2("pcrreset", ["16"])
            #expect(try tpm.policyMatches(bound))
            #expect(try tpm.unseal(bound, authorization: Self.bytes(1)).count == 32)
            #expect(try tpm.lockoutState().failures == 0)
        }
    }

    @Test func anotherTPMRefusesTheSealedObject() throws {
        try withSimulator { first in
            try withSimulator { second in
                let object = try TPMConnection(tcti: first.tcti).seal(
                    Self.bytes(4), authorization: Self.bytes(1), pcrs: [])
                let other = try TPMConnection(tcti: second.tcti)
                #expect {
                    try other.unseal(object, authorization: Self.bytes(1))
                } throws: { error in
                    guard case .objectRejected = error as? TPMError else { return false }
                    return true
                }
            }
        }
    }

    @Test func readPCRMatchesTheReferenceTool() throws {
        try withSimulator { simulator in
            try simulator.tpm2("pcrextend", ["23:sha256=" + String(repeating: "01", count: 32)])
            let digest = try TPMConnection(tcti: simulator.tcti).readPCR(23)
            let reference = try simulator.tpm2("pcrread", ["sha256:23"])
            let hex = digest.map { String(format: "%02X", $0) }.joined()
            #expect(reference.contains("0x" + hex))
        }
    }

    @Test func noTPMAtTheTCTIIsUnavailable() {
        #expect {
            _ = try TPMConnection(tcti: "device:/nonexistent/tpmrm0")
        } throws: { error in
            guard case .unavailable = error as? TPMError else { return false }
            return true
        }
    }
}
