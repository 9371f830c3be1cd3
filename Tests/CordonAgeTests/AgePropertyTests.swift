import PropertyBased
import Testing

@testable import CordonAge

@Suite("CordonAge: round trips and tampering (property-based)")
struct AgePropertyTests {
    static let identity = AgeX25519Identity.generate()
    /// Sizes around the chunk boundaries, and random ones up to three chunks.
    static let sizes = Gen.oneOf(
        Gen<Int?>.element(of: [0, 1, 65_535, 65_536, 65_537, 131_072, 131_073]).map { $0 ?? 0 },
        Gen.int(in: 0...200_000))
    static let pieces = Gen.int(in: 1...70_000).array(of: 1...4)

    /// Any size, fed in any pattern to the encryptor and another to the decryptor, round-trips.
    @Test func encryptDecryptRoundTrips() async {
        await propertyCheck(count: 60, input: Self.sizes, Self.pieces, Self.pieces) { size, write, read in
            let plaintext = AgeTestSupport.bytes(size, seed: UInt64(size + 1))
            let file = try! AgeTestSupport.encrypt(plaintext, recipients: [Self.identity.recipient], pieces: write)
            let (output, error) = AgeTestSupport.decrypt(file, identities: [Self.identity], pieces: read)
            #expect(error == nil, "size \(size): \(String(describing: error))")
            #expect(output == plaintext, "size \(size)")
            // Armored too.
            let armored = AgeArmor.armor(file)
            #expect(try! AgeArmor.dearmor(armored) == file)
        }
    }

    /// Flipping any single bit anywhere in the file makes decryption fail, and what was emitted
    /// before the failure is whole authenticated chunks of the original plaintext, never more.
    @Test func anySingleBitFlipFails() async {
        let plaintext = AgeTestSupport.bytes(140_000, seed: 99)
        let file = try! AgeTestSupport.encrypt(plaintext, recipients: [Self.identity.recipient])
        let positions = Gen.int(in: 0...(file.count * 8 - 1))
        await propertyCheck(count: 300, input: positions, Self.pieces) { bit, read in
            var tampered = file
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            let (output, error) = AgeTestSupport.decrypt(tampered, identities: [Self.identity], pieces: read)
            #expect(error != nil, "bit \(bit) flipped without an error")
            #expect(output.count % AgePayload.chunkSize == 0, "bit \(bit): a partial chunk was emitted")
            #expect(Array(plaintext.prefix(output.count)) == output, "bit \(bit): emitted bytes differ")
        }
    }

    /// Every header bit flip, exhaustively, on a small file (the header is where parsing lives).
    @Test func everyHeaderBitFlipFails() throws {
        let file = try AgeTestSupport.encrypt(Array("x".utf8), recipients: [Self.identity.recipient])
        for bit in 0..<(file.count * 8) {
            var tampered = file
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            let (output, error) = AgeTestSupport.decrypt(tampered, identities: [Self.identity])
            #expect(error != nil && output.isEmpty, "bit \(bit)")
        }
    }
}
