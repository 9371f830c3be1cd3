import CordonSecrets
import Testing

@Suite("SecureBytes")
struct SecureBytesTests {
    private func bytes(of secret: SecureBytes) -> [UInt8] {
        secret.withUnsafeBytes { Array($0) }
    }

    @Test func newBufferIsZeroFilled() {
        let secret = SecureBytes(count: 48)
        #expect(secret.count == 48)
        #expect(bytes(of: secret) == [UInt8](repeating: 0, count: 48))
        #expect(!secret.isZeroed, "zero() has not run yet")
    }

    @Test func copyingKeepsTheBytes() {
        let source: [UInt8] = Array(1...40)
        let secret = SecureBytes(copying: source)
        #expect(secret.count == 40)
        #expect(bytes(of: secret) == source)
    }

    @Test func copyingAnEmptyCollectionGivesOneZeroByte() {
        let secret = SecureBytes(copying: [UInt8]())
        #expect(secret.count == 1)
        #expect(bytes(of: secret) == [0])
    }

    @Test func fillInitializerWritesTheBuffer() {
        let secret = SecureBytes(count: 16) { buffer in
            for index in buffer.indices { buffer[index] = UInt8(index * 3) }
        }
        #expect(bytes(of: secret) == (0..<16).map { UInt8($0 * 3) })
    }

    @Test func zeroReallyOverwritesTheBytes() {
        let secret = SecureBytes(copying: [UInt8](repeating: 0xA5, count: 32))
        #expect(bytes(of: secret).allSatisfy { $0 == 0xA5 })
        secret.zero()
        #expect(secret.isZeroed)
        #expect(bytes(of: secret) == [UInt8](repeating: 0, count: 32))
        #expect(secret.count == 32, "the size is kept")
    }

    @Test func zeroIsIdempotent() {
        let secret = SecureBytes(copying: [UInt8](repeating: 7, count: 8))
        secret.zero()
        secret.zero()
        #expect(secret.isZeroed)
        #expect(bytes(of: secret) == [UInt8](repeating: 0, count: 8))
    }

    @Test func largerThanAPageBuffersWork() {
        let count = 3 * 4096 + 17
        let secret = SecureBytes(count: count) { buffer in
            for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index) }
        }
        #expect(bytes(of: secret) == (0..<count).map { UInt8(truncatingIfNeeded: $0) })
        secret.zero()
        #expect(bytes(of: secret).allSatisfy { $0 == 0 })
    }

    @Test func manyBuffersCanBeAllocatedAndReleased() {
        // mlock may fail under a low RLIMIT_MEMLOCK; SecureBytes must still work.
        for round in 0..<200 {
            let secret = SecureBytes(copying: [UInt8](repeating: UInt8(round % 256), count: 64))
            #expect(bytes(of: secret).allSatisfy { $0 == UInt8(round % 256) })
        }
    }

    @Test func withUnsafeBytesReturnsAndRethrows() throws {
        struct Failure: Error {}
        let secret = SecureBytes(copying: [1, 2, 3])
        #expect(secret.withUnsafeBytes { $0.reduce(0) { $0 + Int($1) } } == 6)
        #expect(throws: Failure.self) { try secret.withUnsafeBytes { _ in throw Failure() } }
    }
}
