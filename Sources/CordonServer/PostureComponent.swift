import CordonPosture
import CordonProtocol
import Foundation
import NIOCore
import NIOPosix

/// The device's posture (`io.cordon.Posture`; docs/ARCHITECTURE.md, "Posture"): the checks of
/// `CordonPosture`, read off the loop on a thread pool of their own (a check may run a program),
/// at most one reading at a time, and kept for `freshness` seconds so that a burst of callers
/// costs one reading.
final class PostureComponent: AgentComponent {
    let methods: [Method] = [.getPosture]
    /// How long a reading answers later calls.
    static let freshness = 5.0

    unowned let host: any ComponentHost
    private var latest: (time: Double, checks: [PostureResult])?
    private var reading: EventLoopFuture<[PostureResult]>?
    private let pool: NIOThreadPool

    init(host: any ComponentHost) {
        self.host = host
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    func serve(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        return .deferred(current().map { encoder.reply(PostureReply(checks: $0)) })
    }

    func shutdown() {
        pool.shutdownGracefully { _ in }
    }

    /// The latest reading when fresh; otherwise the reading under way, or a new one.
    func current() -> EventLoopFuture<[PostureResult]> {
        let loop = host.loop
        if let latest, host.clock() - latest.time < Self.freshness {
            return loop.makeSucceededFuture(latest.checks)
        }
        if let reading { return reading }
        let probe = PostureProbe(command: PostureProbe.systemCommand)
        let future = pool.runIfActive(eventLoop: loop) { probe.run() }
            .flatMapErrorThrowing { _ in
                PostureCheck.allCases.map { PostureResult($0, .unknown, "the agent is stopping") }
            }
        reading = future
        future.assumeIsolated().whenSuccess { [self] checks in
            latest = (host.clock(), checks)
            reading = nil
        }
        return future
    }
}
