import CordonKit
import CordonLocking
import CordonProtocol
import Testing

/// Consumes an event sequence in the background and keeps what it saw, for polling.
final class EventRecorder: Sendable {
    private struct State {
        var events: [CordonEvent] = []
        var finished = false
        var failure: String?
    }

    private final class Storage: Sendable {
        let state = Locked(State())
    }

    private let storage = Storage()
    private let task = Locked<Task<Void, Never>?>(nil)

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == CordonEvent {
        let storage = self.storage
        let consumer = Task {
            do {
                for try await event in sequence {
                    storage.state.withLock { $0.events.append(event) }
                }
            } catch {
                let description = String(describing: error)
                storage.state.withLock { $0.failure = description }
            }
            storage.state.withLock { $0.finished = true }
        }
        task.withLock { $0 = consumer }
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    /// Every event received so far.
    var events: [CordonEvent] { storage.state.withLock { $0.events } }
    /// Whether the sequence ended.
    var finished: Bool { storage.state.withLock { $0.finished } }
    /// The error the sequence ended with, if any, as text.
    var failure: String? { storage.state.withLock { $0.failure } }

    /// Waits until at least `count` events arrived and returns them.
    @discardableResult
    func waitFor(count: Int) async throws -> [CordonEvent] {
        try await eventually("\(count) events") { self.events.count >= count }
        return events
    }

    /// Waits until an event with `seq` arrived and returns every event so far.
    @discardableResult
    func waitFor(seq: Int) async throws -> [CordonEvent] {
        try await eventually("the event with seq \(seq)") { self.events.contains { $0.seq >= seq } }
        return events
    }

    /// Waits until the sequence ended and returns every event.
    @discardableResult
    func waitUntilFinished() async throws -> [CordonEvent] {
        try await eventually("the end of the event sequence") { self.finished }
        return events
    }

    /// Stops consuming.
    func cancel() {
        task.withLock { $0?.cancel() }
    }
}

/// Whether every element is larger than the one before it.
func isStrictlyIncreasing(_ values: [Int]) -> Bool {
    zip(values, values.dropFirst()).allSatisfy { $0 < $1 }
}
