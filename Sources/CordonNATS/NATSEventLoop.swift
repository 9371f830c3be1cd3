import CNATS

/// An event loop that serves connections in place of the library's own threads (a reader and a
/// flusher per connection): many connections in one process, as the fleet swarm of
/// `cordon-bench fleet` runs (docs/PERFORMANCE.md, "Fleet push"). `CordonNATSLoop`'s epoll loop
/// implements it; fleetd, with one connection, does not need one.
public protocol NATSEventLoop: Sendable {
    /// Sets the library's `natsOptions *` to use the loop (its callbacks, and sending and delivery
    /// without threads of the connection's own).
    func attach(_ options: OpaquePointer) -> natsStatus
    /// Runs `work` on the loop's thread and returns when it has run: a connection is first made
    /// there. Never called from the loop's thread.
    func run(_ work: () -> Void)
}
