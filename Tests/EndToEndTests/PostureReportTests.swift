import CordonKit
import CordonProtocol
import Foundation
import Testing

/// Signed posture reports against the real daemon: the CLI with the passcode and a verified app
/// get one; `cordon posture report --verify` and the Python example (PyPI `cryptography`) accept
/// it and refuse it tampered; a same-user program with neither passcode nor registration is refused.
@Suite struct PostureReportTests {
    static let verifier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/posture-verify/verify.py").path

    func cordon(_ daemon: DaemonProcess, _ arguments: [String], input: String? = nil) async throws -> CommandResult {
        try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath] + arguments, input: input)
    }

    func python(_ arguments: [String]) async throws -> CommandResult {
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        return try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), [python, Self.verifier] + arguments)
    }

    @Test func aReportVerifiesAndATamperedOneDoesNot() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        _ = try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")

        let key = try await cordon(daemon, ["posture", "key"])
        #expect(key.status == 0, "\(key.stderr)")
        #expect(key.stdout.hasPrefix("cordon-posture-public-key-v1 "))
        let keyFile = daemon.root.appending("device.pub")
        try key.stdout.write(toFile: keyFile, atomically: true, encoding: .utf8)

        let made = try await cordon(
            daemon, ["posture", "report", "--nonce", "n-0123456789", "--passcode-stdin"], input: "2468\n")
        #expect(made.status == 0, "\(made.stderr)")
        let reportFile = daemon.root.appending("report.json")
        try made.stdout.write(toFile: reportFile, atomically: true, encoding: .utf8)

        // The Python backend example accepts it and reads the signed claims.
        let checked = try await python([reportFile, keyFile, "n-0123456789"])
        #expect(checked.status == 0, "\(checked.stderr)")
        let claims = try #require(
            try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        #expect(claims["nonce"] as? String == "n-0123456789")
        #expect((claims["requester"] as? [String: Any])?["kind"] as? String == "cli")
        #expect(claims["policyVersion"] as? String == (try await client.policyStatus().version))
        #expect((claims["checks"] as? [Any])?.count == PostureCheck.allCases.count)
        // So does the CLI, and it refuses another nonce (a replay).
        let verified = try await cordon(daemon, ["posture", "report", "--verify", reportFile, "--key", keyFile])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.hasPrefix("verified: device key "), "\(verified.stdout)")
        let replay = try await cordon(
            daemon, ["posture", "report", "--verify", reportFile, "--key", keyFile, "--nonce", "other"])
        #expect(replay.status != 0)
        #expect(try await python([reportFile, keyFile, "other"]).status != 0)

        // Tampered: one check turned into a pass inside the signed payload, or another signature.
        var report = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        let encoded = try #require(report["payload"] as? String)
        let payload = try #require(Data(base64Encoded: encoded))
        var text = String(decoding: payload, as: UTF8.self)
        let flipped = text.contains("\"status\":\"fail\"") ? "\"status\":\"fail\"" : "\"status\":\"unknown\""
        text = text.replacingOccurrences(of: flipped, with: "\"status\":\"pass\"")
        report["payload"] = Data(text.utf8).base64EncodedString()
        let tamperedFile = daemon.root.appending("tampered.json")
        try JSONSerialization.data(withJSONObject: report).write(to: URL(fileURLWithPath: tamperedFile))
        let rejected = try await python([tamperedFile, keyFile, "n-0123456789"])
        #expect(rejected.status != 0)
        #expect(rejected.stderr.contains("rejected"), "\(rejected.stderr)")
        let refused = try await cordon(daemon, ["posture", "report", "--verify", tamperedFile, "--key", keyFile])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("does not verify"), "\(refused.stderr)")

        // A key of another device does not verify it either.
        let otherKey = daemon.root.appending("other.pub")
        try "cordon-posture-public-key-v1 \(Data(repeating: 7, count: 32).base64EncodedString())\n"
            .write(toFile: otherKey, atomically: true, encoding: .utf8)
        #expect(try await python([reportFile, otherKey, "n-0123456789"]).status != 0)
        await client.close()
        try await daemon.stop()
    }

    @Test func aVerifiedAppGetsAReportNamingIt() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        _ = try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.vault", socketPath: daemon.socketPath)
        let report = try await app.postureReport(nonce: "app-nonce")
        let payload = try JSONDecoder().decode(
            PostureReportPayload.self, from: try #require(Data(base64Encoded: report.payload)))
        #expect(payload.requester.kind == "app")
        #expect(payload.requester.appId == "com.example.vault")
        #expect(payload.requester.pid == Int(getpid()))
        #expect(payload.keyId == (try await client.postureKey()).keyId)
        // Only while unlocked: the device key is sealed under the master key.
        try await client.lock()
        await #expect(throws: CordonError.self) { _ = try await app.postureReport(nonce: "later") }
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func aSameUserProgramWithoutPasscodeOrRegistrationIsRefused() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        _ = try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            bare = call(s, "io.cordon.Posture.Report", {"nonce": "n1"})
            guessed = call(s, "io.cordon.Posture.Report", {"nonce": "n1", "passcode": "0000"})
            # A made-up token names no registration.
            forged = call(s, "io.cordon.Posture.Report", {"nonce": "n1", "token": "00" * 16})
            print(json.dumps({"bare": error(bare), "guessed": error(guessed), "forged": error(forged)}))
            """, [daemon.socketPath], in: daemon.root)
        #expect(answer["bare"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["guessed"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(answer["forged"] as? String == "io.cordon.App.InvalidToken")
        let audit = try await runCommand(
            Binaries.cordon, ["--socket", daemon.socketPath, "audit", "--json"])
        #expect(audit.stdout.contains("posture.report"), "\(audit.stdout)")
        await client.close()
        try await daemon.stop()
    }
}
