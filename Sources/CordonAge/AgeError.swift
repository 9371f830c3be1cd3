/// Everything that can go wrong reading or writing an age file, each case naming what is wrong
/// and where. A decryptor that throws has emitted only plaintext from chunks that authenticated.
public enum AgeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The header does not follow the grammar: `line` is 1-based, `reason` says what is wrong.
    case malformedHeader(line: Int, reason: String)
    /// The version line names a version other than `v1`.
    case unsupportedVersion(String)
    /// A stanza of a type this module implements has bad arguments or a bad body.
    case invalidStanza(type: String, reason: String)
    /// The header mixes a `scrypt` stanza with other stanzas (the spec forbids it).
    case scryptNotAlone
    /// The scrypt work factor (log2 N) is over the identity's bound.
    case workFactorTooLarge(Int, maximum: Int)
    /// The header is over `AgeHeaderParser.maximumHeaderBytes`.
    case headerTooLarge(limit: Int)
    /// No identity could unwrap any stanza; `stanzaTypes` lists what the header held.
    case noIdentityMatched(stanzaTypes: [String])
    /// A file key was unwrapped but the header MAC does not match: the header was tampered with.
    case headerMACMismatch
    /// The file ends inside the named part (`header`, `nonce` or `payload`).
    case truncated(String)
    /// Payload chunk `chunk` (0-based) did not authenticate; nothing of it was output.
    case chunkAuthenticationFailed(chunk: UInt64)
    /// The last chunk is empty although the payload is not (chunk `chunk`).
    case emptyLastChunk(chunk: UInt64)
    /// Bytes follow the final chunk.
    case trailingData
    /// The ASCII armor is not strict PEM: `line` is 1-based within the armored text.
    case armor(line: Int, reason: String)
    /// A key string (Bech32 `age1…` or `AGE-SECRET-KEY-1…`) is malformed.
    case invalidKey(String)
    /// An argument the caller passed is unusable (an empty passphrase, no recipients, …).
    case invalidArgument(String)
    /// Reading or writing a file descriptor failed with `errno`.
    case io(operation: String, errno: Int32)

    /// The failure classes of the C2SP age test vectors (CCTV `expect:`), for callers that need
    /// to know which layer refused a file.
    public enum FailureClass: String, Sendable {
        case header = "header failure"
        case hmac = "HMAC failure"
        case payload = "payload failure"
        case armor = "armor failure"
        case noMatch = "no match"
        case other
    }

    /// The layer that refused the file.
    public var failureClass: FailureClass {
        switch self {
        case .malformedHeader, .unsupportedVersion, .invalidStanza, .scryptNotAlone, .workFactorTooLarge,
            .headerTooLarge:
            return .header
        case .truncated(let part):
            return part == "payload" ? .payload : .header
        case .noIdentityMatched: return .noMatch
        case .headerMACMismatch: return .hmac
        case .chunkAuthenticationFailed, .emptyLastChunk, .trailingData: return .payload
        case .armor: return .armor
        case .invalidKey, .invalidArgument, .io: return .other
        }
    }

    public var description: String {
        switch self {
        case .malformedHeader(let line, let reason): return "malformed age header at line \(line): \(reason)"
        case .unsupportedVersion(let version): return "unsupported age version '\(version)' (only v1 is supported)"
        case .invalidStanza(let type, let reason): return "invalid \(type) stanza: \(reason)"
        case .scryptNotAlone: return "an scrypt stanza must be the only stanza in the header"
        case .workFactorTooLarge(let factor, let maximum):
            return "scrypt work factor \(factor) is over the maximum \(maximum)"
        case .headerTooLarge(let limit): return "age header is over \(limit) bytes"
        case .noIdentityMatched(let types):
            return "no identity matched any of the stanzas (\(types.joined(separator: ", ")))"
        case .headerMACMismatch: return "age header MAC does not match: the header was modified"
        case .truncated(let part): return "age file is truncated in its \(part)"
        case .chunkAuthenticationFailed(let chunk): return "payload chunk \(chunk) failed authentication"
        case .emptyLastChunk(let chunk): return "payload chunk \(chunk) is an empty last chunk after data"
        case .trailingData: return "data follows the final payload chunk"
        case .armor(let line, let reason): return "invalid ASCII armor at line \(line): \(reason)"
        case .invalidKey(let reason): return "invalid age key: \(reason)"
        case .invalidArgument(let reason): return "invalid argument: \(reason)"
        case .io(let operation, let errno): return "\(operation) failed (errno \(errno))"
        }
    }
}
