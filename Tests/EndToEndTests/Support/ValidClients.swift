import CordonLocking
import Foundation
import Synchronization

/// Well-behaved raw clients on threads of their own, alternating `GetStatus` and an allowed
/// `Check`, timing every round trip and recording any error.
final class ValidClients: Sendable {
    private let sockets: [RawVarlinkSocket]
    private let stopped = Atomic<Bool>(false)
    private let results = Locked<(times: [Double], errors: [String])>(([], []))
    private let completed = Locked<[Int]>([])
    private let done = DispatchGroup()

    init(count: Int, socket: String) throws {
        sockets = try (0..<count).map { _ in try RawVarlinkSocket(userPath: socket) }
        completed.withLock { $0 = Array(repeating: 0, count: count) }
    }

    func start() {
        for (index, socket) in sockets.enumerated() {
            done.enter()
            Thread { [self] in
                defer { done.leave() }
                var times: [Double] = []
                while !stopped.load(ordering: .relaxed) {
                    let status = times.count % 2 == 0
                    let began = DispatchTime.now().uptimeNanoseconds
                    do {
                        let reply = try socket.call(status ? FaultFixtures.getStatus : FaultFixtures.allowedCopy)
                        times.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
                        let good =
                            status ? varlinkErrorName(reply) == nil : FaultFixtures.isDecision(reply, allowed: true)
                        if !good { results.withLock { $0.errors.append(reply) } }
                    } catch {
                        results.withLock { $0.errors.append("\(error)") }
                        break
                    }
                    completed.withLock { $0[index] = times.count }
                }
                results.withLock { $0.times += times }
            }.start()
        }
    }

    /// Lets every client finish at least `minimumRoundTrips`, stops them and summarizes.
    func finish(minimumRoundTrips: Int) async -> LoadReport {
        while completed.withLock({ $0.contains { $0 < minimumRoundTrips } }), results.withLock({ $0.errors.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        stopped.store(true, ordering: .relaxed)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            done.notify(queue: .global()) { continuation.resume() }
        }
        return results.withLock { LoadReport(times: $0.times, errors: $0.errors) }
    }
}

/// The valid clients' round trips.
struct LoadReport {
    let roundTrips: Int
    let worstMs: Int
    let p99Ms: Int
    let errors: [String]

    init(times: [Double], errors: [String]) {
        let sorted = times.sorted()
        roundTrips = sorted.count
        worstMs = Int((sorted.last ?? 0).rounded(.up))
        p99Ms = sorted.isEmpty ? 0 : Int(sorted[min(sorted.count - 1, sorted.count * 99 / 100)].rounded(.up))
        self.errors = errors
    }
}
