import CordonProtocol
import CordonSecrets
import NIOCore
import NIOPosix

/// Reads what protects a TPM-sealed key (`KeySealing.status(of:)`: the lockout state, whether the
/// sealed object still loads and its PCRs still hold) for `GetStatus`, on a thread of its own and
/// one read at a time: calls that arrive while a read runs share it. So a client that asks for the
/// status in a loop neither queues TPM work ahead of the store's writes (the store pool has one
/// thread: attempt counters, records, codes) nor has more than one TPM read running for it.
///
/// Used on the agent's event loop only.
final class ProtectionReader {
    private let pool = NIOThreadPool(numberOfThreads: 1)
    private var inFlight: EventLoopFuture<KeyProtectionStatus?>?

    init() {
        pool.start()
    }

    /// The status of `wrapped` as `sealing` reads it now, or the read already running.
    func read(_ sealing: KeySealing, _ wrapped: WrappedKey, warning: String?, on loop: any EventLoop)
        -> EventLoopFuture<KeyProtectionStatus?>
    {
        if let inFlight { return inFlight }
        let future = pool.runIfActive(eventLoop: loop) { sealing.status(of: wrapped, warning: warning) }
        inFlight = future
        future.assumeIsolated().whenComplete { [self] _ in inFlight = nil }
        return future
    }

    func shutdown() {
        pool.shutdownGracefully { _ in }
    }
}
