import CNATS
import CNATSLoop
import CordonNATS

/// One epoll loop on its own thread serving many NATS connections through the C client's
/// external-event-loop API (`CNATSLoop`): no reader or flusher thread per connection, and delivery
/// on the library's shared pool. The fleet swarm of `cordon-bench fleet` runs on it; the products
/// keep the library's own threads. It replaces the library's libuv adapter, which kept polling
/// sockets the library had closed on a reconnect (docs/ARCHITECTURE.md, "Fleet push").
public final class NATSEpollLoop: NATSEventLoop, @unchecked Sendable {
    // The C loop is thread-safe: jobs are queued under its lock, the adapter's calls take each
    // connection's own.
    private let loop: OpaquePointer

    /// Starts the loop's thread; nil when the system refused an epoll set, an eventfd or a thread.
    public init?() {
        guard let loop = cordon_nats_loop_start() else { return nil }
        self.loop = loop
    }

    /// Sets `options` to use this loop.
    public func attach(_ options: OpaquePointer) -> natsStatus { cordon_nats_loop_attach(loop, options) }

    /// Runs `work` on the loop's thread and returns when it has run.
    public func run(_ work: () -> Void) {
        withoutActuallyEscaping(work) { work in
            var job = work
            withUnsafeMutablePointer(to: &job) { pointer in
                cordon_nats_loop_run(
                    loop,
                    { context in context?.assumingMemoryBound(to: (() -> Void).self).pointee() },
                    pointer)
            }
        }
    }

    /// Stops the loop (every connection on it closed first).
    public func stop() { cordon_nats_loop_stop(loop) }
}
