// The fuzz build's stand-in for swift-crypto (which plain swiftc cannot build here), with the API
// CordonFleet's verifier uses. Digests are a deterministic mix (not SHA); an Ed25519 signature
// "verifies" when it is 64 bytes of 0x5a, so the fuzzer reaches every step behind a signature
// check. Only the fuzzer links it: the tests and the product use swift-crypto.

/// A digest's bytes.
public struct ShimDigest: Sequence, Sendable {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}

private func mix<S: Sequence>(_ data: S, count: Int) -> ShimDigest where S.Element == UInt8 {
    var out: [UInt8] = []
    var lane: UInt64 = 0
    while out.count < count {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 &+ lane
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
            out.append(UInt8(truncatingIfNeeded: hash >> shift))
        }
        lane += 1
    }
    return ShimDigest(bytes: out)
}

public enum SHA256 {
    public static func hash<S: Sequence>(data: S) -> ShimDigest where S.Element == UInt8 { mix(data, count: 32) }
}

public enum SHA512 {
    public static func hash<S: Sequence>(data: S) -> ShimDigest where S.Element == UInt8 { mix(data, count: 64) }
}

public enum Curve25519 {
    public enum Signing {
        public struct PublicKey {
            public init<S: Sequence>(rawRepresentation: S) throws where S.Element == UInt8 {
                guard Array(rawRepresentation).count == 32 else { throw ShimError() }
            }

            public func isValidSignature<S: Sequence, D: Sequence>(_ signature: S, for data: D) -> Bool
            where S.Element == UInt8, D.Element == UInt8 {
                let bytes = Array(signature)
                return bytes.count == 64 && bytes.allSatisfy { $0 == 0x5a }
            }
        }
    }
}

struct ShimError: Error {}
