import CordonNATS
import Foundation
import Synchronization

/// The swarm's connection events: which machines have connected once, and when each reconnected
/// since the last reset (the restart measure).
final class SwarmEvents: Sendable {
    struct Snapshot {
        var connected = 0
        var reconnects: [Date] = []
    }

    private struct State {
        var seen: [Bool]
        var snapshot = Snapshot()
    }

    private let state: Mutex<State>

    init(count: Int) { state = Mutex(State(seen: Array(repeating: false, count: count))) }

    func record(_ index: Int, _ event: NATSEvent) {
        let now = Date()
        state.withLock { state in
            switch event {
            case .connected, .reconnected:
                if !state.seen[index] {
                    state.seen[index] = true
                    state.snapshot.connected += 1
                } else {
                    state.snapshot.reconnects.append(now)
                }
            default: break
            }
        }
    }

    func resetReconnects() { state.withLock { $0.snapshot.reconnects = [] } }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    func wait(timeout: Double, _ condition: (Snapshot) -> Bool) async -> Bool {
        let deadline = Date() + timeout
        while Date() < deadline {
            if state.withLock({ condition($0.snapshot) }) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
