/// Limits every connection is held to: what one client, one process and one user may make
/// the agent hold for them.
public struct ConnectionLimits: Sendable, Equatable {
    /// The largest message accepted, in bytes (excluding the NUL).
    public var maxMessageBytes: Int
    /// The most unanswered calls (messages) buffered per connection; past half of it reading pauses.
    public var maxPendingCalls: Int
    /// The bytes of unanswered calls buffered per connection at which reading pauses (what one
    /// read brought may still arrive: at most four 64 KiB chunks).
    public var maxPendingBytes: Int
    /// The most events queued for a subscriber that does not read before it is disconnected.
    public var maxQueuedEvents: Int
    /// The most connections one uid may hold.
    public var maxConnectionsPerUID: Int
    /// The most connections one process may hold (the pid of its peer credentials, while that
    /// process lives).
    public var maxConnectionsPerProcess: Int
    /// How long a connection may sit idle (no call in flight or waiting, not streaming) without
    /// having registered an app before the agent closes it (`io.cordon.Agent.ConnectionIdle`).
    public var idleConnectionTimeout: Duration

    public init(
        maxMessageBytes: Int, maxPendingCalls: Int, maxQueuedEvents: Int, maxConnectionsPerUID: Int,
        maxPendingBytes: Int = 256 * 1024, maxConnectionsPerProcess: Int = 64,
        idleConnectionTimeout: Duration = .seconds(900)
    ) {
        self.maxMessageBytes = maxMessageBytes
        self.maxPendingCalls = maxPendingCalls
        self.maxPendingBytes = maxPendingBytes
        self.maxQueuedEvents = maxQueuedEvents
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.maxConnectionsPerProcess = maxConnectionsPerProcess
        self.idleConnectionTimeout = idleConnectionTimeout
    }

    /// The defaults: 64 KiB messages, 64 pipelined calls (reading pauses at 32 or at 256 KiB of
    /// them), 256 queued events, 4096 connections per user and 64 per process, 15 minutes idle
    /// without registering.
    public static let standard = ConnectionLimits(
        maxMessageBytes: 64 * 1024, maxPendingCalls: 64, maxQueuedEvents: 256, maxConnectionsPerUID: 4096)
}
