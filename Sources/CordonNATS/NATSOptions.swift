import Crypto

/// How a `NATSConnection` connects: the servers, who it is (an NKey whose private half never leaves
/// its owner: `signer` signs the server's nonce), TLS, and the reconnect schedule.
public struct NATSOptions: Sendable {
    /// Server URLs (`nats://host:4222`, `tls://host:4222`).
    public var servers: [String]
    /// The connection's name, shown in the server's monitoring.
    public var name: String
    /// The user NKey (`NATSNKey.user(publicKey:)`) and what signs the server's nonce with its key.
    /// Only a nonce is handed to `signer` (`NATSNKey.isNonce`): a server offering anything else to
    /// sign is refused and the connection fails.
    public var nkey: String?
    public var signer: (@Sendable ([UInt8]) -> [UInt8])?
    /// PEM CA certificates the server's certificate must chain to; set (or a `tls://` server), TLS is
    /// required.
    public var caFile: String?
    /// Replies to this connection's requests come under `<inboxPrefix>.…`, so permissions can give
    /// each user its own inboxes alone (`_INBOX.<device>.>`).
    public var inboxPrefix: String?
    /// Reconnects wait a random time up to `min(reconnectCap, reconnectBase · 2^attempt)` seconds
    /// (exponential backoff with full jitter): a fleet that lost its server does not return at once.
    public var reconnectBase: Double = 0.5
    public var reconnectCap: Double = 30
    /// Seconds to wait for a server to answer a connect.
    public var connectTimeout: Double = 5
    /// Keep trying in the background when no server answers at first (an offline machine):
    /// `NATSConnection.init` returns at once and `onEvent` says `.reconnected` when it connects.
    public var retryFirstConnect = false
    /// The event loop that serves the connection (nil: the library's threads of its own).
    public var eventLoop: (any NATSEventLoop)?

    public init(servers: [String], name: String) {
        self.servers = servers
        self.name = name
    }

    /// Connects as the user of an NKey seed (`SU…`, the form NATS tools write): its public key is
    /// the identity, its private key signs the nonce.
    public mutating func identify(seed text: String) -> Bool {
        guard let seed = NATSNKey.seed(ofUser: text),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else { return false }
        nkey = NATSNKey.user(publicKey: Array(key.publicKey.rawRepresentation))
        signer = { nonce in (try? key.signature(for: nonce)).map(Array.init) ?? [] }
        return true
    }

    /// The delay before reconnect attempt `attempt` (1-based), for a uniform `unit` in 0..<1.
    /// After an attempt given up only because its nonce's signature could not be sent (see
    /// `NATSNonceTests`), at most 50 ms: the server did nothing wrong, and a machine that waited out
    /// the doubled backoff for it came back long after the rest of the fleet (a server restart's
    /// stragglers, docs/PERFORMANCE.md, "Fleet push").
    public func reconnectDelay(attempt: Int, unit: Double, afterUnsendableNonce: Bool = false) -> Double {
        if afterUnsendableNonce { return 0.05 * unit }
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(reconnectCap, reconnectBase * Double(1 << exponent))
        return ceiling * unit
    }
}

/// What happened to a connection, as the library reports it (from its own threads).
public enum NATSEvent: Sendable, Equatable {
    /// The first connection is made (at once, or later with `retryFirstConnect`).
    case connected
    case disconnected
    case reconnected
    case closed
    /// An asynchronous error (a slow consumer, a permission violation), with the library's text.
    case error(String)
}
