import CordonLocking
import Foundation
import Synchronization

/// Clients on their own threads repeating one call as fast as the agent answers, each counting
/// the replies it received that `acknowledges` accepts. They run until the agent goes away (a
/// `kill -9`) or `stop()`; `finish()` waits for them and returns each client's count.
final class CallHammer: Sendable {
    private let counts: Locked<[Int]>
    private let others = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchGroup()
    let unexpected = Locked<[String]>([])

    /// Connects `clients` sockets to `socket` as the test user and starts them, each repeating `request` (raw
    /// JSON); `acknowledges(reply)` says whether a reply counts.
    init(
        clients: Int, socket: String, request: String,
        acknowledges: @escaping @Sendable (String) -> Bool
    ) throws {
        counts = Locked(Array(repeating: 0, count: clients))
        let sockets = try (0..<clients).map { _ in try RawVarlinkSocket(userPath: socket) }
        for (index, connection) in sockets.enumerated() {
            done.enter()
            // A thread of its own: a blocked socket read must never starve Dispatch's pool.
            Thread { [self] in
                defer { done.leave() }
                while !stopped.load(ordering: .relaxed) {
                    guard let reply = try? connection.call(request) else { return }
                    if acknowledges(reply) {
                        counts.withLock { $0[index] += 1 }
                    } else {
                        others.add(1, ordering: .relaxed)
                        unexpected.withLock { if $0.count < 5 { $0.append(reply) } }
                    }
                }
            }.start()
        }
    }

    /// Acknowledged replies so far, over every client.
    var acknowledged: Int { counts.withLock { $0.reduce(0, +) } }

    /// Replies that did not count.
    var otherReplies: Int { others.load(ordering: .relaxed) }

    /// Asks the clients to stop after their current call.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Waits (off the cooperative pool) until every client has ended; returns their counts.
    func finish() async -> [Int] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            done.notify(queue: .global()) { continuation.resume() }
        }
        return counts.withLock { $0 }
    }
}
