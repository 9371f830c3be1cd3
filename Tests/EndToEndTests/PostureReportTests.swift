import CordonProtocol
import Foundation
import Testing

/// Signed posture reports against the real daemon: the CLI with the passcode and a verified app
/// get one; `cordon posture report --verify` and the Python example (PyPI `cryptography`) accept
/// it and refuse it tampered; a same-user program with neither passcode nor registration is refused.
/// cordond, the CLI and the apps run as an ordinary user outside test mode (``UserAgent``); the
/// verifier (a backend, not Cordon's) runs as the test.
@Suite struct PostureReportTests {
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    static let verifier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/posture-verify/verify.py").path

    func python(_ arguments: [String]) async throws -> CommandResult {
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        return try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), [python, Self.verifier] + arguments)
    }

    @Test func aReportVerifiesAndATamperedOneDoesNot() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }

        let key = try await agent.cli(["posture", "key"])
        #expect(key.status == 0, "\(key.stderr)")
        #expect(key.stdout.hasPrefix("cordon-posture-public-key-v1 "))
        let keyFile = agent.home.appending("device.pub")
        try key.stdout.write(toFile: keyFile, atomically: true, encoding: .utf8)

        let made = try await agent.cli(
            ["posture", "report", "--nonce", "n-0123456789", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(made.status == 0, "\(made.stderr)")
        let reportFile = agent.home.appending("report.json")
        try made.stdout.write(toFile: reportFile, atomically: true, encoding: .utf8)

        // The Python backend example accepts it and reads the signed claims.
        let checked = try await python([reportFile, keyFile, "n-0123456789"])
        #expect(checked.status == 0, "\(checked.stderr)")
        let claims = try #require(
            try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        #expect(claims["nonce"] as? String == "n-0123456789")
        #expect((claims["requester"] as? [String: Any])?["kind"] as? String == "cli")
        let policy = try await agent.cli(["policy", "status", "--json"])
        let version = try JSONDecoder().decode(PolicyStatus.self, from: Data(policy.stdout.utf8)).version
        #expect(claims["policyVersion"] as? String == version)
        #expect((claims["checks"] as? [Any])?.count == PostureCheck.allCases.count)
        // So does the CLI, and it refuses another nonce (a replay).
        let verified = try await agent.cli(["posture", "report", "--verify", reportFile, "--key", keyFile])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.hasPrefix("verified: device key "), "\(verified.stdout)")
        let replay = try await agent.cli(
            ["posture", "report", "--verify", reportFile, "--key", keyFile, "--nonce", "other"])
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
        let tamperedFile = agent.home.appending("tampered.json")
        try JSONSerialization.data(withJSONObject: report).write(to: URL(fileURLWithPath: tamperedFile))
        let rejected = try await python([tamperedFile, keyFile, "n-0123456789"])
        #expect(rejected.status != 0)
        #expect(rejected.stderr.contains("rejected"), "\(rejected.stderr)")
        let refused = try await agent.cli(["posture", "report", "--verify", tamperedFile, "--key", keyFile])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("does not verify"), "\(refused.stderr)")

        // A key of another device does not verify it either.
        let otherKey = agent.home.appending("other.pub")
        try "cordon-posture-public-key-v1 \(Data(repeating: 7, count: 32).base64EncodedString())\n"
            .write(toFile: otherKey, atomically: true, encoding: .utf8)
        #expect(try await python([reportFile, otherKey, "n-0123456789"]).status != 0)
        agent.terminate()
    }

    @Test func aVerifiedAppGetsAReportNamingIt() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        // The app (run as the user) asks for a report, then, once the container is locked (by a
        // same-user program, as `cordon lock` would), asks again.
        let app = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.vault"})
            harden()
            report = call(s, "io.cordon.Posture.Report", {"nonce": "app-nonce"})
            key = call(connect(sys.argv[1]), "io.cordon.Posture.GetKey")
            # Only while unlocked: the device key is sealed under the master key.
            locked = call(connect(sys.argv[1]), "io.cordon.Agent.Lock")
            later = call(s, "io.cordon.Posture.Report", {"nonce": "later"})
            print(json.dumps({"payload": report.get("parameters", {}).get("payload"), "error": error(report),
                              "keyId": key.get("parameters", {}).get("keyId"), "locked": error(locked),
                              "later": error(later), "pid": os.getpid()}))
            """)
        let encoded = try #require(app["payload"] as? String, "\(app)")
        let payload = try JSONDecoder().decode(
            PostureReportPayload.self, from: try #require(Data(base64Encoded: encoded)))
        #expect(payload.requester.kind == "app")
        #expect(payload.requester.appId == "com.example.vault")
        #expect(payload.requester.pid == app["pid"] as? Int)
        #expect(payload.keyId == app["keyId"] as? String)
        #expect(app["locked"] is NSNull, "\(app)")
        let later = try #require(app["later"] as? String, "a report was made while locked: \(app)")
        #expect(later.hasPrefix("io.cordon."), "\(later)")
        agent.terminate()
    }

    @Test func aSameUserProgramWithoutPasscodeOrRegistrationIsRefused() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            bare = call(s, "io.cordon.Posture.Report", {"nonce": "n1"})
            guessed = call(s, "io.cordon.Posture.Report", {"nonce": "n1", "passcode": "0000"})
            # A made-up token names no registration.
            forged = call(s, "io.cordon.Posture.Report", {"nonce": "n1", "token": "00" * 16})
            print(json.dumps({"bare": error(bare), "guessed": error(guessed), "forged": error(forged)}))
            """)
        #expect(answer["bare"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["guessed"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(answer["forged"] as? String == "io.cordon.App.InvalidToken")
        let audit = try await agent.cli(["audit", "--json"])
        #expect(audit.stdout.contains("posture.report"), "\(audit.stdout)")
        agent.terminate()
    }
}
