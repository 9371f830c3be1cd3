import Foundation
import Testing

/// A third-party varlink client (Python `varlink` from PyPI) parses every interface the
/// agent describes and calls it.
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
                agent.Initialize("2468")
                try:
                    agent.Unlock("0000")
                except varlink.VarlinkError as e:
                    out["wrong"] = e.error()
                    out["wrongParameters"] = e.parameters()
                agent.Unlock("2468")
                out["after"] = agent.GetStatus().status.state
            with client.open("io.cordon.App", namespaced=True) as app:
                registration = app.Register("com.example.python")
                out["register"] = registration.managed
                out["keyLength"] = len(app.GetKey().key)
                # A signed posture report for the registration, asked on another connection.
                with client.open("io.cordon.Posture", namespaced=True) as posture:
                    report = posture.Report(nonce="py-nonce", token=registration.token)
                    out["reportFormat"] = report.format
                    out["reportKey"] = report.publicKey == posture.GetKey().publicKey
        print(json.dumps(out))
        """

    @Test func pythonVarlinkOpensEveryInterfaceAndCalls() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let script = daemon.root.appending("client.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), [python, script, daemon.socketPath])
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
        try await daemon.stop()
    }
}
