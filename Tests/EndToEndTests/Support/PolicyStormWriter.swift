import CordonLocking
import Foundation
import Synchronization

/// Rewrites many admin policy files in a loop on its own thread, each atomically (as `cordon
/// policy push` does): a main file whose `pasteboard.maxChars` changes every round, and forty
/// side files of which every seventh is invalid (rejected, so audited on every reload).
final class PolicyStormWriter: Sendable {
    static let mainFile = "10-storm.json"
    let directory: String
    private let state = Locked<(rounds: Int, lastMaxChars: Int?, started: Bool, stopped: Bool)>((0, nil, false, false))
    private let done = DispatchSemaphore(value: 0)

    init(directory: String) {
        self.directory = directory
    }

    /// Completed rounds so far.
    var rounds: Int { state.withLock { $0.rounds } }

    /// The `maxChars` of the main file as last written completely.
    var lastMaxChars: Int? { state.withLock { $0.lastMaxChars } }

    func start() {
        state.withLock { $0.started = true }
        DispatchQueue.global().async { [self] in
            defer { done.signal() }
            var round = 0
            while !state.withLock({ $0.stopped }) {
                let maxChars = 1000 + round
                let side = round % 40
                let sideText =
                    side % 7 == 0
                    ? #"{"schema": "cordon.policy.v1", "pasteboard": {"maxCharz": 5}}"#
                    : #"{"schema": "cordon.policy.v1"}"#
                do {
                    try FaultFixtures.write(
                        #"{"schema": "cordon.policy.v1", "pasteboard": {"maxChars": \#(maxChars)}}"#,
                        to: directory + "/" + Self.mainFile)
                    state.withLock { $0.lastMaxChars = maxChars }
                    try FaultFixtures.write(sideText, to: directory + String(format: "/20-side-%02d.json", side))
                } catch {
                    return
                }
                round += 1
                state.withLock { $0.rounds = round }
            }
        }
    }

    /// Stops after the current round and waits for it (idempotent).
    func stop() {
        let wasRunning = state.withLock { value -> Bool in
            defer { value.stopped = true }
            return value.started && !value.stopped
        }
        if wasRunning { done.wait() }
    }

    /// The policy version in a `Reload` reply.
    static func version(inReloadReply reply: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
            let parameters = object["parameters"] as? [String: Any],
            let status = parameters["status"] as? [String: Any]
        else { return nil }
        return status["version"] as? String
    }
}
