import CordonFleet
import CordonSystem
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The service loop (`cordon-fleetd run`): polls on the jittered schedule, at once on SIGUSR1 or a
/// `refresh` command, and when the push channel's doorbell rings (after `FleetDoorbell`'s random
/// delay); stops on SIGTERM; tells systemd when it is ready (`Type=notify`). With `metrics` it
/// serves the poller's metrics there from the start until it stops.
public final class FleetDaemon: Sendable {
    let poller: FleetPoller
    let interval: Double
    let logger: Logger
    let push: FleetdConfiguration.Push?
    let key: FleetDeviceKey?
    let metrics: FleetdConfiguration.MetricsListen?

    public init(
        poller: FleetPoller, interval: Double, logger: Logger, push: FleetdConfiguration.Push? = nil,
        key: FleetDeviceKey? = nil, metrics: FleetdConfiguration.MetricsListen? = nil
    ) {
        self.poller = poller
        self.interval = interval
        self.logger = logger
        self.push = push
        self.key = key
        self.metrics = metrics
    }

    /// What woke the loop.
    enum Wake: Sendable {
        case signal(Int32)
        /// The scheduled poll is due.
        case due
        /// A ring asked for a poll at this time.
        case pollAt(Date)
    }

    /// Runs until SIGTERM or SIGINT; throws only when the metrics endpoint cannot be bound.
    public func run() async throws(FleetdError) {
        var server: FleetdMetricsServer?
        if let metrics {
            server = try await FleetdMetricsServer.start(
                host: metrics.host, port: metrics.port, metrics: poller.metrics)
            logger.info("serving metrics", metadata: ["listen": "\(metrics.host):\(server?.port ?? 0)"])
        }
        let (wakeups, continuation) = AsyncStream<Wake>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let sources = [SIGTERM, SIGINT, SIGUSR1].map { signalNumber -> any DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(.signal(signalNumber)) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        let (channel, listener) = startPush(wake: continuation)
        defer {
            channel?.close()
            listener?.cancel()
        }
        let notifier = SystemdNotifier()
        var schedule = FleetPollSchedule(interval: interval)
        var generator = SystemRandomNumberGenerator()
        var ready = false
        var iterator = wakeups.makeAsyncIterator()
        var nextPoll = Date()
        while true {
            if Date() >= nextPoll {
                let result = await poller.poll()
                let delay: Double
                switch result {
                case .verified(_, let refreshNow):
                    delay = refreshNow ? 0 : schedule.afterSuccess(unit: Double.random(in: 0..<1, using: &generator))
                    notifier.status("verified; next poll in \(Int(delay)) s")
                case .failed(let message):
                    delay = schedule.afterFailure(unit: Double.random(in: 0..<1, using: &generator))
                    notifier.status("last poll failed: \(message.prefix(120)); retry in \(Int(delay)) s")
                }
                nextPoll = Date().addingTimeInterval(delay)
                if !ready {
                    notifier.ready(status: "polling")
                    ready = true
                }
                if delay == 0 { continue }
            }
            // Sleep until the poll is due or something else wakes the loop, whichever is first.
            let wait = max(nextPoll.timeIntervalSinceNow, 0)
            let timer = Task {
                try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
                if !Task.isCancelled { continuation.yield(.due) }
            }
            let woke = await iterator.next() ?? .signal(SIGTERM)
            timer.cancel()
            switch woke {
            case .signal(SIGTERM), .signal(SIGINT):
                notifier.stopping()
                await server?.stop()
                await poller.shutdown()
                logger.info("stopping")
                return
            case .signal:
                nextPoll = Date()
            case .due:
                break
            case .pollAt(let at):
                nextPoll = min(nextPoll, at)
            }
        }
    }

    /// Connects the push channel when configured: rings and pushed commands are taken one at a time
    /// by the poller, off the main loop (a flood drops rings, never a signal); a ring that schedules a
    /// poll, or a pushed `refresh`, moves the next poll earlier; new reports go out on the channel.
    private func startPush(wake: AsyncStream<Wake>.Continuation) -> (FleetPush?, Task<Void, Never>?) {
        guard let push, let key else { return (nil, nil) }
        // Apart, so that a flood of rings never crowds out a command file.
        let (rings, ringing) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let (files, arriving) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let channel: FleetPush
        let metrics = poller.metrics
        do {
            channel = try FleetPush(
                push, key: key, logger: logger, onRing: { ringing.yield($0) }, onCommands: { arriving.yield($0) },
                onOversized: { channel, _ in metrics.oversized(channel) })
        } catch {
            logger.error("push: \(error.message); polling only")
            return (nil, nil)
        }
        let poller = self.poller
        let logger = self.logger
        let listener = Task {
            await poller.setReportSink { channel.publishReport($0, logger: logger) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await bytes in rings {
                        if case .poll(let at) = await poller.ring(bytes, unit: Double.random(in: 0..<1)) {
                            wake.yield(.pollAt(at))
                        }
                    }
                }
                group.addTask {
                    for await bytes in files {
                        switch await poller.takePushed(bytes) {
                        case .taken(let handed, let refreshNow):
                            if handed > 0 { logger.info("push: commands handed on", metadata: ["count": "\(handed)"]) }
                            if refreshNow { wake.yield(.pollAt(Date())) }
                        case .refused(let why):
                            logger.warning("push: a command file was refused: \(why)")
                        case .stale(let newest, let highest):
                            // Audited once a minute (push.stale): a replayed flood must not fill the log.
                            logger.debug(
                                "push: a genuine command file older than what was taken came again; ignored",
                                metadata: ["newestInFile": "\(newest)", "highestTaken": "\(highest)"])
                        }
                    }
                }
            }
        }
        return (channel, listener)
    }
}
