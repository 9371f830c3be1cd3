import Synchronization

/// Why the verification callback of one connection refused the server, read when the handshake
/// fails (NIOSSL reports only that it failed; docs/ARCHITECTURE.md, "Pinned channel").
public final class VerificationOutcome: Sendable {
    private let refusal = Mutex<SecureChannelError?>(nil)

    /// An empty outcome.
    public init() {}

    /// The refusal recorded, if any.
    public var error: SecureChannelError? { refusal.withLock { $0 } }

    func record(_ error: SecureChannelError) {
        refusal.withLock { $0 = $0 ?? error }
    }
}
