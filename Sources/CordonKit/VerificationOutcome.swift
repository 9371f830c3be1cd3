import CordonLocking

/// Why the verification callback of one connection refused the server, read when the handshake
/// fails (NIOSSL reports only that it failed; docs/ARCHITECTURE.md, "Pinned channel").
public final class VerificationOutcome: Sendable {
    private let refusal = Locked<SecureChannelError?>(nil)
    private let accepted = Locked<[[UInt8]]>([])

    /// An empty outcome.
    public init() {}

    /// The refusal recorded, if any.
    public var error: SecureChannelError? { refusal.withLock { $0 } }

    /// The chain the server presented (DER, leaf first), once the callback accepted it.
    public var presented: [[UInt8]] { accepted.withLock { $0 } }

    func accept(_ chain: [[UInt8]]) {
        accepted.withLock { $0 = chain }
    }

    func record(_ error: SecureChannelError) {
        refusal.withLock { $0 = $0 ?? error }
    }
}
