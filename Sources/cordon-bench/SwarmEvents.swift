import CordonLocking
import CordonNATS
import Foundation

/// The swarm's connection events: which machines have connected once, and when each reconnected
/// since the last reset (the restart measure).
final class SwarmEvents: Sendable {
    struct Snapshot {
        var connected = 0
        /// The first reconnection of each machine since the last reset.
        var reconnects: [Int: Date] = [:]
        /// Events counted, duplicates included.
        var events = 0
    }

    private struct State {
        var seen: [Bool]
        /// Every event of each machine in order, one letter each (`letter(of:)`).
        var trails: [String]
        var snapshot = Snapshot()
    }

    private let state: Locked<State>

    init(count: Int) {
        state = Locked(State(seen: Array(repeating: false, count: count), trails: Array(repeating: "", count: count)))
    }

    /// Machine `index`'s events so far, in order: C connected, D disconnected, R reconnected,
    /// X closed, E an error.
    func trail(of index: Int) -> String { state.withLock { $0.trails[index] } }

    static func letter(of event: NATSEvent) -> Character {
        switch event {
        case .connected: "C"
        case .disconnected: "D"
        case .reconnected: "R"
        case .closed: "X"
        case .error: "E"
        }
    }

    func record(_ index: Int, _ event: NATSEvent) {
        let now = Date()
        state.withLock { state in
            state.trails[index].append(Self.letter(of: event))
            switch event {
            case .connected, .reconnected:
                state.snapshot.events += 1
                if !state.seen[index] {
                    state.seen[index] = true
                    state.snapshot.connected += 1
                } else if state.snapshot.reconnects[index] == nil {
                    state.snapshot.reconnects[index] = now
                }
            default: break
            }
        }
    }

    func resetReconnects() { state.withLock { $0.snapshot.reconnects = [:] } }

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
