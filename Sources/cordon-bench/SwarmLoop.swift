import ArgumentParser
import CNATS
import CNATSLoop
import CordonNATS

/// One libuv loop on its own thread serving every simulated machine's NATS connection (the C
/// client's libuv adapter, `CNATSLoop`): no reader or flusher thread per connection.
final class SwarmLoop: NATSEventLoop, @unchecked Sendable {
    // The C loop is thread-safe: jobs are queued under its lock, the adapter's calls likewise.
    private let loop: OpaquePointer

    init() throws {
        guard let loop = cordon_nats_loop_start() else { throw ValidationError("libuv: the event loop did not start") }
        self.loop = loop
    }

    func attach(_ options: OpaquePointer) -> natsStatus { cordon_nats_loop_attach(loop, options) }

    func run(_ work: () -> Void) {
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
    func stop() { cordon_nats_loop_stop(loop) }
}
