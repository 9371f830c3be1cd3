import Foundation
import Logging
import NIOCore

/// Logs accept failures on the listening socket (once per episode, and again when accepting
/// resumes) and, when the agent is out of file descriptors, pauses accepting for a moment.
///
/// `accept` failing with `EMFILE` or `ENFILE` leaves the connection queued, so the socket stays
/// readable, and NIO (whose `AcceptBackoffHandler` never stops the socket being watched) would
/// retry at once in a busy loop. Pausing reads unregisters the socket; clients wait in the
/// listen backlog until descriptors are freed, and existing connections are served meanwhile.
final class AcceptErrorLogger: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    /// How long accepting pauses after a resource error.
    static let backoff = TimeAmount.milliseconds(250)

    private let logger: Logger
    /// Accepts failed since the last one that succeeded.
    private var failedAccepts = 0
    private var paused = false

    init(logger: Logger) {
        self.logger = logger
    }

    /// Adds the logger to a server channel's pipeline (from `serverChannelInitializer`).
    static func install(on channel: any Channel, logger: Logger) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(AcceptErrorLogger(logger: logger))
        }
    }

    /// Whether an accept error means the process or the system is out of resources.
    static func isExhaustion(_ error: IOError) -> Bool {
        [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if failedAccepts > 0 {
            logger.notice("accepting connections again", metadata: ["failedAccepts": "\(failedAccepts)"])
            failedAccepts = 0
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        failedAccepts += 1
        let exhausted = Self.isExhaustion(ioError)
        if failedAccepts == 1 {
            logger.error(
                exhausted
                    ? "accept failed: out of file descriptors; new connections wait until some are freed"
                    : "accept failed",
                metadata: [
                    "errno": "\(String(cString: strerror(ioError.errnoCode)))",
                    "openFileLimit": "\(Self.openFileLimit)",
                    "retryMs": "\(exhausted ? Self.backoff.nanoseconds / 1_000_000 : 0)",
                ])
        }
        if exhausted { pause(context: context) }
        context.fireErrorCaught(error)
    }

    /// Stops watching the listening socket, and watches it again after `backoff`.
    private func pause(context: ChannelHandlerContext) {
        guard !paused, let options = context.channel.syncOptions else { return }
        paused = true
        try? options.setOption(.autoRead, value: false)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.backoff) { [self] in
            paused = false
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    /// The soft `RLIMIT_NOFILE` in force.
    static var openFileLimit: String {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return "unknown" }
        return "\(limit.rlim_cur)"
    }
}
