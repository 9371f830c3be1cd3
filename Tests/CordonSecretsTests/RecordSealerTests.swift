import CordonSecrets
import Testing

@Suite struct RecordSealerTests {
    let custody = KeyCustody()

    func sealer(_ purpose: [String], master: SecureBytes) -> RecordSealer {
        RecordSealer(key: custody.purposeKey(master: master, purpose: purpose))
    }

    @Test func opensWhatItSealedForTheSameSlot() throws {
        let master = custody.makeMasterKey()
        let sealer = sealer(["storage", "com.example.notes"], master: master)
        let sealed = try sealer.seal(Array("secret value".utf8), slot: ["com.example.notes", "default", "token"])
        #expect(sealed.count == "secret value".utf8.count + RecordSealer.overhead)
        #expect(!sealed.contains(subsequence: Array("secret".utf8)))
        let opened = try sealer.open(sealed, slot: ["com.example.notes", "default", "token"])
        #expect(opened.withUnsafeBytes { Array($0) } == Array("secret value".utf8))
    }

    @Test func aRecordCopiedToAnotherSlotDoesNotOpen() throws {
        let master = custody.makeMasterKey()
        let sealer = sealer(["storage"], master: master)
        let sealed = try sealer.seal([1, 2, 3], slot: ["com.example.a", "ns", "name"])
        #expect(throws: RecordSealError.tampered) { try sealer.open(sealed, slot: ["com.example.b", "ns", "name"]) }
        #expect(throws: RecordSealError.tampered) { try sealer.open(sealed, slot: ["com.example.a", "ns", "other"]) }
        // Field boundaries are part of the slot: "ab"+"c" is not "a"+"bc".
        let boundary = try sealer.seal([9], slot: ["ab", "c"])
        #expect(throws: RecordSealError.tampered) { try sealer.open(boundary, slot: ["a", "bc"]) }
    }

    @Test func anotherPurposeOrMasterKeyDoesNotOpen() throws {
        let master = custody.makeMasterKey()
        let sealed = try sealer(["storage"], master: master).seal([7, 7], slot: ["x"])
        #expect(throws: RecordSealError.tampered) { try sealer(["tokens"], master: master).open(sealed, slot: ["x"]) }
        let other = custody.makeMasterKey()
        #expect(throws: RecordSealError.tampered) { try sealer(["storage"], master: other).open(sealed, slot: ["x"]) }
    }

    @Test func tamperedAndTruncatedRecordsAreNamed() throws {
        let sealer = sealer(["storage"], master: custody.makeMasterKey())
        var sealed = try sealer.seal([1, 2, 3, 4], slot: ["x"])
        sealed[14] ^= 0x01
        #expect(throws: RecordSealError.tampered) { try sealer.open(sealed, slot: ["x"]) }
        #expect(throws: RecordSealError.truncated(5)) { try sealer.open([0, 0, 0, 0, 0], slot: ["x"]) }
    }

    @Test func purposeKeysDifferFromAppKeysAndEachOther() {
        let master = custody.makeMasterKey()
        let app = custody.legacyAppKey(master: master, appId: "com.example.notes").withUnsafeBytes { Array($0) }
        let storage = custody.purposeKey(master: master, purpose: ["storage", "com.example.notes"])
            .withUnsafeBytes { Array($0) }
        let split = custody.purposeKey(master: master, purpose: ["storage", "com.example", "notes"])
            .withUnsafeBytes { Array($0) }
        #expect(app != storage)
        #expect(storage != split)
        #expect(
            storage
                == custody.purposeKey(master: master, purpose: ["storage", "com.example.notes"]).withUnsafeBytes {
                    Array($0)
                })
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<$0 + subsequence.count]) == subsequence }
    }
}
