import CordonFleet
import CordonLocking
import CordonNATS
import Foundation
import Histogram

/// The admin's end of the swarm: every report published on `cordon.fleet.report.>`, with the time
/// it reached the admin's subscription, then verified (`FleetReport.verify`, against the subject's
/// device id) on a queue of its own; what each phase waits for and measures is read from here.
///
/// The arrival time is taken before the verification, not after: the subscription delivers on one
/// thread, so a time taken after each verification would also count the wait behind every report
/// verified before it (docs/PERFORMANCE.md, "Fleet push"). The verifications still run during the
/// phase, on the same two cores as the machines.
final class FleetSwarmIngest: Sendable {
    struct Arrival {
        var device: String
        var at: Date
        /// The verified report; nil until verified, and for one that did not verify.
        var report: FleetReport?
    }

    struct State {
        var arrivals: [Arrival] = []
        var invalid = 0
    }

    let state = Locked(State())
    private let verifier = DispatchQueue(label: "cordon-bench.fleet.ingest")

    /// Subscribes on `connection` (the admin's).
    func listen(on connection: NATSConnection) throws {
        let prefix = FleetPushedCommands.reportSubject(for: "")
        try connection.subscribe(FleetPushedCommands.reportSubjects) { [self] message in
            let at = Date()
            let device = String(message.subject.dropFirst(prefix.count))
            let index = state.withLock { value in
                value.arrivals.append(Arrival(device: device, at: at))
                return value.arrivals.count - 1
            }
            let data = message.data
            verifier.async { [self] in
                let report = try? FleetReport.verify(data, device: device)
                state.withLock {
                    $0.arrivals[index].report = report
                    if report == nil { $0.invalid += 1 }
                }
            }
        }
    }

    var count: Int { state.withLock { $0.arrivals.count } }
    /// Reports that did not verify (after every report received so far is verified).
    var invalid: Int {
        verifier.sync {}
        return state.withLock { $0.invalid }
    }

    /// The arrivals from index `start` on, each verified.
    func arrivals(from start: Int) -> [Arrival] {
        verifier.sync {}
        return state.withLock { Array($0.arrivals[start...]) }
    }

    /// Waits until `condition` holds for the arrivals since `start`, at most `timeout` seconds.
    func wait(from start: Int, timeout: Double, _ condition: ([Arrival]) -> Bool) async -> Bool {
        let deadline = Date() + timeout
        while Date() < deadline {
            if state.withLock({ condition(Array($0.arrivals[start...])) }) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

/// Latencies in microseconds, kept in an HDR histogram (three significant digits).
struct SwarmLatencies {
    var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)

    mutating func record(seconds: Double) { _ = histogram.record(UInt64(Swift.max(seconds, 0) * 1_000_000)) }

    var count: UInt64 { histogram.totalCount }
    func seconds(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1_000_000 }
    var max: Double { Double(histogram.max) / 1_000_000 }

    var line: String {
        String(
            format: "n %d, p50 %.3f s, p90 %.3f s, p99 %.3f s, max %.3f s", count, seconds(50), seconds(90),
            seconds(99), max)
    }
}
