import CordonSecrets
import CordonTPM
import Foundation
import Testing

/// NV monotonic counters (the state anchor's, docs/ARCHITECTURE.md "State anchor") against swtpm,
/// with `tpm2-tools` as the reference.
@Suite("CordonTPM counters against swtpm", .serialized)
struct TPMCounterTests {
    static let index: UInt32 = 0x0130_0042
    static let authorization = SecureBytes(copying: [UInt8](repeating: 7, count: 32))

    @Test func aCounterOnlyGoesUpAndNeedsItsAuthorization() throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let tpm = try TPMConnection(tcti: simulator.tcti)
        try tpm.defineCounter(index: Self.index, authorization: Self.authorization)
        let first = try tpm.readCounter(index: Self.index, authorization: Self.authorization)
        try tpm.incrementCounter(index: Self.index, authorization: Self.authorization)
        try tpm.incrementCounter(index: Self.index, authorization: Self.authorization)
        #expect(try tpm.readCounter(index: Self.index, authorization: Self.authorization) == first + 2)
        // The reference tool reads the same value (8 bytes, big-endian) with the same authValue.
        let hex = Self.authorization.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let output = simulator.stateDirectory + "/counter.bin"
        let handle = String(format: "0x%08x", Self.index)
        try simulator.tpm2("nvread", [handle, "-C", handle, "-P", "hex:\(hex)", "-s", "8", "-o", output])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(bytes.count == 8)
        #expect(bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == first + 2)
        // Another authValue neither raises nor reads it (and counts nothing against the lockout: NO_DA).
        let wrong = SecureBytes(copying: [UInt8](repeating: 8, count: 32))
        #expect(throws: TPMError.authorizationFailed) {
            try tpm.incrementCounter(index: Self.index, authorization: wrong)
        }
        #expect(try tpm.lockoutState().failures == 0)
        #expect(try tpm.readCounter(index: Self.index, authorization: Self.authorization) == first + 2)
        // A taken index is said so (the agent picks another).
        #expect(throws: TPMCounterError.indexTaken) {
            try tpm.defineCounter(index: Self.index, authorization: Self.authorization)
        }
    }

    @Test func aCounterDefinedAgainNeverRepeatsAnOldValue() throws {
        let simulator = try SoftwareTPM()
        defer { simulator.stop() }
        let tpm = try TPMConnection(tcti: simulator.tcti)
        try tpm.defineCounter(index: Self.index, authorization: Self.authorization)
        for _ in 0..<5 { try tpm.incrementCounter(index: Self.index, authorization: Self.authorization) }
        let before = try tpm.readCounter(index: Self.index, authorization: Self.authorization)
        // Removed (with the owner's empty authorization, as an insider could) and defined again:
        // a counter starts at the highest value any counter of the TPM had (TPM 2.0 Part 1, NV counters).
        try tpm.undefine(index: Self.index)
        try tpm.defineCounter(index: Self.index, authorization: Self.authorization)
        #expect(try tpm.readCounter(index: Self.index, authorization: Self.authorization) >= before)
    }
}
