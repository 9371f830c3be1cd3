import Foundation
import Testing

/// A third-party varlink client (Python `varlink` from PyPI) parses every interface the
/// agent describes and calls it. cordond and the client run as an ordinary user outside test mode
/// (``UserAgent``); the client hardens itself after `Register`, as an app must for its key.
@Suite struct ThirdPartyVarlinkTests {
    static let script = """
        import json, sys, varlink
        out = {}
        with varlink.Client(address="unix:" + sys.argv[1]) as client:
            info = client.get_interfaces()
            out["interfaces"] = sorted(info)
            for name in info:
                with client.open(name) as connection:
                    out.setdefault("opened", []).append(name)
            with client.open("io.cordon.Agent", namespaced=True) as agent:
                status = agent.GetStatus().status
                out["state"] = status.state
                out["maxAttempts"] = status.maxAttempts
                agent.Initialize(sys.argv[2])
                try:
                    agent.Unlock("Wrong-Guess-4409")
                except varlink.VarlinkError as e:
                    out["wrong"] = e.error()
                    out["wrongParameters"] = e.parameters()
                agent.Unlock(sys.argv[2])
                out["after"] = agent.GetStatus().status.state
            with client.open("io.cordon.App", namespaced=True) as app:
                registration = app.Register("com.example.python")
                out["register"] = registration.managed
                import ctypes
                ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, as CordonKit does
                out["keyLength"] = len(app.GetKey().key)
                # A signed posture report for the registration, asked on another connection.
                with client.open("io.cordon.Posture", namespaced=True) as posture:
                    report = posture.Report(nonce="py-nonce", token=registration.token)
                    out["reportFormat"] = report.format
                    out["reportKey"] = report.publicKey == posture.GetKey().publicKey
        print(json.dumps(out))
        """

    @Test func pythonVarlinkOpensEveryInterfaceAndCalls() async throws {
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#, initialize: false)
        defer { agent.cleanUp() }
        let script = agent.home.appending("client.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let result = try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]),
            Array(UserAgent.asUser.dropFirst()) + ["/usr/bin/python3", script, agent.socketPath, UserAgent.passcode],
            environment: UserAgent.environment(home: agent.home.path))
        #expect(result.status == 0, "python varlink failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let answer = try #require(object)
        #expect(
            answer["interfaces"] as? [String] == [
                "io.cordon.Agent", "io.cordon.App", "io.cordon.Audit", "io.cordon.Identity", "io.cordon.Pasteboard",
                "io.cordon.Policy", "io.cordon.Posture", "io.cordon.Storage", "io.cordon.Tokens", "org.varlink.service",
            ])
        #expect((answer["opened"] as? [String])?.count == 10)
        #expect(answer["state"] as? String == "uninitialized")
        #expect(answer["maxAttempts"] as? Int == 10)
        #expect(answer["wrong"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect((answer["wrongParameters"] as? [String: Any])?["attemptsLeft"] as? Int == 9)
        #expect(answer["after"] as? String == "unlocked")
        #expect(answer["register"] as? Bool == true)
        #expect(answer["keyLength"] as? Int == 44)
        #expect(answer["reportFormat"] as? String == "cordon.posture.report.v1")
        #expect(answer["reportKey"] as? Bool == true)
    }
}
