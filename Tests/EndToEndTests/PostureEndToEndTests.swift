import CordonProtocol
import Foundation
import Testing

/// The device's posture through the agent: for the CLI, for doctor, and for any varlink peer.
@Suite struct PostureEndToEndTests {
    @Test func everyCheckAnswersThroughTheAgent() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let output = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "posture", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let checks = try JSONDecoder().decode([PostureResult].self, from: Data(output.stdout.utf8))
        #expect(checks.map(\.check) == PostureCheck.allCases)
        #expect(checks.allSatisfy { !$0.evidence.isEmpty })

        // A third-party peer reads the same.
        let answer = try await AttackScript.run(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Posture.Get")
            print(json.dumps({"checks": [c["check"] + "=" + c["status"] for c in reply["parameters"]["checks"]]}))
            """, [daemon.socketPath], in: daemon.root)
        let peer = try #require(answer["checks"] as? [String])
        #expect(peer == checks.map { "\($0.check.rawValue)=\($0.status.rawValue)" })

        let table = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "posture"])
        #expect(table.stdout.hasPrefix("CHECK"), "\(table.stdout)")
        let doctor = try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath, "doctor"])
        #expect(doctor.stdout.contains("posture diskEncryption: "), "\(doctor.stdout)")
        try await daemon.stop()
    }
}
