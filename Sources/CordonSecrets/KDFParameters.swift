/// scrypt parameters, stored with the wrapped key so a record always unwraps with its own.
public struct KDFParameters: Sendable, Codable, Equatable {
    /// The CPU/memory cost N (a power of two).
    public var rounds: Int
    /// The block size r.
    public var blockSize: Int
    /// The parallelism p.
    public var parallelism: Int
    /// The random salt.
    public var salt: [UInt8]

    public init(rounds: Int, blockSize: Int, parallelism: Int, salt: [UInt8]) {
        self.rounds = rounds
        self.blockSize = blockSize
        self.parallelism = parallelism
        self.salt = salt
    }

    /// Memory one derivation needs, in bytes (128 · N · r).
    public var memoryBytes: Int { 128 * rounds * blockSize }

    /// INSECURE parameters that make the KDF nearly free: for tests only.
    public static func insecureFast(salt: [UInt8]) -> KDFParameters {
        KDFParameters(rounds: 16, blockSize: 8, parallelism: 1, salt: salt)
    }

    /// Whether these are the insecure test parameters.
    public var isInsecure: Bool { rounds < 1 << 14 }
}
