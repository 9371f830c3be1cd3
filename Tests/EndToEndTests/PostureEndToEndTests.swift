import CordonProtocol
import Foundation
import Testing

/// The device's posture through the agent: for the CLI, for doctor, and for any varlink peer.
/// cordond, the CLI and the peer run as an ordinary user outside test mode (``UserAgent``).
@Suite struct PostureEndToEndTests {
    @Test func everyCheckAnswersThroughTheAgent() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
        defer { agent.cleanUp() }
        let output = try await agent.cli(["posture", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let checks = try JSONDecoder().decode([PostureResult].self, from: Data(output.stdout.utf8))
        #expect(checks.map(\.check) == PostureCheck.allCases)
        #expect(checks.allSatisfy { !$0.evidence.isEmpty })

        // A third-party peer reads the same.
        let answer = try await agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Posture.Get")
            print(json.dumps({"checks": [c["check"] + "=" + c["status"] for c in reply["parameters"]["checks"]]}))
            """)
        let peer = try #require(answer["checks"] as? [String])
        #expect(peer == checks.map { "\($0.check.rawValue)=\($0.status.rawValue)" })

        let table = try await agent.cli(["posture"])
        #expect(table.stdout.hasPrefix("CHECK"), "\(table.stdout)")
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("posture diskEncryption: "), "\(doctor.stdout)")
        agent.terminate()
    }
}
