import CordonLocking
import CordonStore
import Foundation
import Synchronization
import Testing

/// Shared steps of the fault tests: calls as raw JSON, policy files, and what must hold after
/// the agent was killed.
enum FaultFixtures {
    /// Options that let a test make many wrong guesses without a wipe or a back-off.
    static let manyAttempts = ["--max-attempts", "1000000", "--backoff-free-attempts", "1000000"]

    /// An admin policy under which an unmanaged client's paste from another app is denied (audited).
    static let denyPastes = #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#

    static let wrongUnlock = #"{"method":"io.cordon.Agent.Unlock","parameters":{"passcode":"wrong-guess"}}"#
    static let deniedPaste =
        #"{"method":"io.cordon.App.Check","parameters":{"action":"pasteboard.paste","target":"com.example.other"}}"#
    static let allowedCopy = #"{"method":"io.cordon.App.Check","parameters":{"action":"pasteboard.copy"}}"#
    static let getStatus = #"{"method":"io.cordon.Agent.GetStatus"}"#
    static let reload = #"{"method":"io.cordon.Policy.Reload"}"#

    /// Writes `text` to `path` atomically (as `cordon policy push` does), creating its directory.
    static func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Whether a reply is a decision with `allowed` equal to `allowed`.
    static func isDecision(_ reply: String, allowed: Bool) -> Bool {
        guard varlinkErrorName(reply) == nil,
            let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
            let parameters = object["parameters"] as? [String: Any],
            let decision = parameters["decision"] as? [String: Any]
        else { return false }
        return decision["allowed"] as? Bool == allowed
    }
}

extension FaultFixtures {
    /// The passcode of the fault suites' containers.
    static let passcode = "correct-horse"

    /// Initializes and unlocks through the CLI run as the user, then makes two wrong passcode
    /// changes: the container is unlocked (its key in memory) with two failed attempts on record.
    static func unlockedWithTwoFailures(_ agent: UserAgent) async throws {
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: passcode + "\n").status == 0)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: passcode + "\n").status == 0)
        for _ in 0..<2 {
            #expect(
                try await agent.cli(["passwd", "--passcode-stdin"], input: "wrong-horse\nother-horse\n").status != 0)
        }
        let status = try await agent.status()
        #expect(status["state"] as? String == "unlocked")
        #expect(status["failedAttempts"] as? Int == 2)
    }

    /// After a `kill -9` and a restart: the database is sound, the agent starts locked without
    /// its key, and the failed-attempt counter holds `failedAttempts`.
    static func expectSoundRestart(_ agent: UserAgent, failedAttempts: Int) async throws {
        let database = try CordonDatabase(path: agent.home.appending("data/cordon.sqlite"), readOnly: true)
        #expect(try database.integrityCheck() == "ok")
        let status = try await agent.status()
        #expect(status["state"] as? String == "lockedNoKey")
        #expect(status["failedAttempts"] as? Int == failedAttempts)
        let withoutPasscode = try await agent.attack(
            """
            print(json.dumps({"unlock": error(call(connect(sys.argv[1]), "io.cordon.Agent.Unlock", {}))}))
            """)
        #expect(withoutPasscode["unlock"] as? String == "io.cordon.Agent.PasscodeRequired", "\(withoutPasscode)")
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: passcode + "\n").status == 0)
        #expect(try await agent.status()["state"] as? String == "unlocked")
    }
}

/// Values collected by concurrent threads.
final class Collected<Value: Hashable & Sendable>: Sendable {
    private let values = Locked<Set<Value>>([])

    func insert(_ value: Value) { values.withLock { _ = $0.insert(value) } }
    var all: Set<Value> { values.withLock { $0 } }
}
