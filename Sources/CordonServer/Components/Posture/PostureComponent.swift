import CordonPolicy
import CordonPosture
import CordonProtocol
import Foundation
import NIOCore
import NIOPosix

/// The device's posture (`io.cordon.Posture`; docs/ARCHITECTURE.md, "Posture"): the checks of
/// `CordonPosture`, read off the loop on a thread pool of their own (a check may run a program),
/// at most one reading at a time, and kept for `freshness` seconds so that a burst of callers
/// costs one reading.
///
/// It also applies the `conditions` the policy sets on each check (`PostureComponent+Conditions`):
/// at registration, and again after every reading while apps are registered — every
/// `AgentConfiguration.postureInterval` seconds and on resume from suspend — and signs posture
/// reports with the device key (`PostureComponent+Report`).
final class PostureComponent: InterfaceComponent {
    /// How long a reading answers later calls.
    static let freshness = 5.0

    unowned let host: any ComponentHost
    private var latest: (time: Double, checks: [PostureResult])?
    /// Whether the device's posture has been read (the apps' compliance is unknown before).
    var hasReading: Bool { latest != nil }
    private var reading: EventLoopFuture<[PostureResult]>?
    private let pool: NIOThreadPool
    /// The root the checks read under and the program runner (the minimums come from the policy).
    let root: String
    let command: PostureProbe.CommandRunner
    /// The periodic re-reading, scheduled while an app is registered.
    private var timer: Scheduled<Void>?
    /// Apps whose key a `block` (or `wipe`) check revoked, with the finding; cleared when it passes.
    var blocked: [String: PostureFinding] = [:]
    /// The checks each app was last warned about (a warning is sent again only when they change).
    var warned: [String: [PostureResult]] = [:]
    /// Apps whose check passed again while the container held no key: they hear
    /// `EncryptionKeyAvailable` with reason `posture` when the key comes back.
    var restoredWhileLocked: Set<String> = []

    init(host: any ComponentHost) {
        self.host = host
        root = host.configuration.postureRoot
        command = PostureProbe.systemCommand
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    func serve(_ method: Method.Posture, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        switch method {
        case .report:
            return try report(call)
        case .getKey:
            return try publicKey(call)
        case .get:
            return .deferred(current().map { encoder.reply(PostureReply(checks: $0)) })
        }
    }

    /// A new policy may set other conditions: read again while apps are registered. The key
    /// coming back ends a posture revocation that was lifted while it was away.
    func observe(_ event: CordonEvent) {
        if event.kind == .encryptionKeyAvailable { keyReturned() }
        guard event.kind == .policyDidChange, !host.registry.registrations.isEmpty else { return }
        refresh(why: "policy change")
    }

    func shutdown() {
        timer?.cancel()
        timer = nil
        pool.shutdownGracefully { _ in }
    }

    /// The latest reading when fresh; otherwise the reading under way, or a new one.
    func current() -> EventLoopFuture<[PostureResult]> {
        if let latest, host.clock() - latest.time < min(Self.freshness, host.configuration.postureInterval) {
            return host.loop.makeSucceededFuture(latest.checks)
        }
        return read()
    }

    /// Reads now (or joins the reading under way), then applies the conditions to every registered app.
    @discardableResult
    func refresh(why: String) -> EventLoopFuture<[PostureResult]> {
        host.logger.debug("posture: reading", metadata: ["why": "\(why)"])
        return read()
    }

    private func read() -> EventLoopFuture<[PostureResult]> {
        if let reading { return reading }
        // `conditions.minimumVersions`: what the osVersion and kernelVersion checks compare with.
        var minimums = MinimumVersions.table(host.policy.policy[PolicyKeys.Conditions.minimumVersions].value)
        let kernel = minimums.removeValue(forKey: "kernel")
        let probe = PostureProbe(
            root: root, minimums: PostureMinimums(osVersions: minimums, kernel: kernel), command: command)
        let future = pool.runIfActive(eventLoop: host.loop) { probe.run() }
            .flatMapErrorThrowing { _ in
                PostureCheck.allCases.map { PostureResult($0, .unknown, "the agent is stopping") }
            }
        reading = future
        future.assumeIsolated().whenSuccess { [self] checks in
            latest = (host.clock(), checks)
            reading = nil
            reevaluate(checks)
        }
        return future
    }

    /// Keeps the periodic reading scheduled while any app is registered, and only then.
    func schedule() {
        guard !host.isShuttingDown, !host.registry.registrations.isEmpty else {
            timer?.cancel()
            timer = nil
            return
        }
        guard timer == nil else { return }
        let interval = host.configuration.postureInterval
        timer = host.loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(interval * 1e9))) { [self] in
            timer = nil
            refresh(why: "every \(interval) s").assumeIsolated().whenComplete { [self] _ in schedule() }
        }
    }
}
