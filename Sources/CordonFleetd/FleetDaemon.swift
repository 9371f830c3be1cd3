import CordonFleet
import CordonSystem
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The service loop (`cordon-fleetd run`): polls on the jittered schedule, at once on SIGUSR1 or a
/// `refresh` command, stops on SIGTERM; tells systemd when it is ready (`Type=notify`).
public final class FleetDaemon: Sendable {
    let poller: FleetPoller
    let interval: Double
    let logger: Logger

    public init(poller: FleetPoller, interval: Double, logger: Logger) {
        self.poller = poller
        self.interval = interval
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT.
    public func run() async {
        let (wakeups, continuation) = AsyncStream<Int32>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let sources = [SIGTERM, SIGINT, SIGUSR1].map { signalNumber -> any DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        let notifier = SystemdNotifier()
        var schedule = FleetPollSchedule(interval: interval)
        var generator = SystemRandomNumberGenerator()
        var ready = false
        var iterator = wakeups.makeAsyncIterator()
        while true {
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
            if !ready {
                notifier.ready(status: "polling")
                ready = true
            }
            // Sleep until the delay passes or a signal comes, whichever is first.
            let timer = Task {
                try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                if !Task.isCancelled { continuation.yield(0) }
            }
            let woke = await iterator.next() ?? SIGTERM
            timer.cancel()
            if woke == SIGTERM || woke == SIGINT {
                notifier.stopping()
                await poller.shutdown()
                logger.info("stopping")
                return
            }
        }
    }
}
