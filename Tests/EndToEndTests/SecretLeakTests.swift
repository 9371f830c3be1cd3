import Foundation
import Testing

/// Passcodes and key bytes never reach a log line, even at trace level, nor linger in the
/// agent's ordinary heap. cordond, the CLI and the app run as an ordinary user (``UserAgent``).
@Suite struct SecretLeakTests {
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// An app (a raw varlink client that hardens itself as CordonKit does) asks for its key
    /// 51 times, then another connection asks `GetStatus` 20 times (other traffic reusing the
    /// agent's heap, as in a running agent); prints the key (base64).
    static let askForTheKey = """
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.leak"})
        harden()
        key = call(s, "io.cordon.App.GetKey")["parameters"]["key"]
        for _ in range(50):
            call(s, "io.cordon.App.GetKey")
        status = connect(sys.argv[1])
        for _ in range(20):
            call(status, "io.cordon.Agent.GetStatus")
        print(json.dumps({"key": key}))
        """

    /// An app asks for its key again and again; afterwards no base64 copy of it is left in
    /// cordond's memory (the reply is encoded from locked memory straight into a frame that is
    /// zeroed once written).
    @Test func getKeyLeavesNoBase64CopyInTheAgentsMemory() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(Self.askForTheKey)
        let key = try #require(answer["key"] as? String)
        // The test process is root: it reads the non-dumpable agent's memory as no user can.
        let pid = agent.process.processIdentifier
        let copies = try ProcessMemory.occurrences(of: Array(key.utf8), in: pid)
        #expect(copies == 0, "\(copies) base64 copies of the app key in cordond's memory")
        // The search sees the agent's memory: the socket path it serves is there.
        #expect(try ProcessMemory.occurrences(of: Array(agent.socketPath.utf8), in: pid) > 0)
    }

    @Test func passcodeAndKeyNeverLogged() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false, arguments: ["--log-level", "trace"])
        defer { agent.cleanUp() }
        let passcode = UserAgent.passcode
        let wrong = "Wrong-Guess-4409"
        let changed = "Otter-Basalt-9902"
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: passcode + "\n").status == 0)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: wrong + "\n").status != 0)
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: passcode + "\n").status == 0)
        let answer = try await agent.attack(Self.askForTheKey)
        let key = try #require(answer["key"] as? String)
        let passwd = try await agent.cli(["passwd", "--passcode-stdin"], input: "\(passcode)\n\(changed)\n")
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try await agent.cli(["lock"]).status == 0)
        agent.stop()

        let log = agent.log
        #expect(log.contains("event"), "the trace log was captured")
        for secret in [passcode, wrong, changed] {
            #expect(!log.contains(secret), "a passcode appears in the log")
        }
        let keyBytes = try #require(Data(base64Encoded: key))
        #expect(!log.contains(key), "the app key (base64) appears in the log")
        let hex = keyBytes.map { String(format: "%02x", $0) }.joined()
        #expect(!log.lowercased().contains(hex), "the app key (hex) appears in the log")
        let logData = try Data(contentsOf: URL(fileURLWithPath: agent.logPath))
        #expect(logData.range(of: keyBytes) == nil, "raw key bytes appear in the log")
    }
}
