import CordonLocking
import Foundation
import Synchronization

/// A fixed pool of threads for the swarm's blocking work (a report published and acknowledged by
/// the stream, the catch-up's read): Dispatch's pool on Linux keeps about as many threads as
/// cores, so thousands of blocking calls there would wait behind each other.
final class SwarmWorkers: Sendable {
    /// The work waiting, and the index of the next to run (taken in O(1); the front is dropped
    /// once it is half the array, so thousands queued at once do not make every take a copy).
    private let queue = Locked<(items: [@Sendable () -> Void], next: Int)>(([], 0))
    private let ready = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in loop() }
            thread.name = "swarm-\(index)"
            thread.start()
        }
    }

    /// Runs `work` on a thread of the pool.
    func run(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.items.append(work) }
        ready.signal()
    }

    private func loop() {
        while true {
            ready.wait()
            if stopped.load(ordering: .acquiring) { return }
            let work = queue.withLock { queue -> (@Sendable () -> Void)? in
                guard queue.next < queue.items.count else { return nil }
                let work = queue.items[queue.next]
                queue.next += 1
                if queue.next * 2 >= queue.items.count {
                    queue.items.removeFirst(queue.next)
                    queue.next = 0
                }
                return work
            }
            work?()
        }
    }

    /// Stops the threads once the queue is empty (`count` is the pool's size).
    func stop(count: Int) {
        stopped.store(true, ordering: .releasing)
        for _ in 0..<count { ready.signal() }
    }
}
