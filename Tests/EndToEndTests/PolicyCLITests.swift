import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `cordon policy …` and `cordon audit` against a real `cordond`.
@Suite struct PolicyCLITests {
    func cordon(_ daemon: DaemonProcess, _ arguments: [String]) async throws -> CommandResult {
        try await runCommand(
            Binaries.cordon, ["--socket", daemon.socketPath] + arguments,
            environment: [
                "CORDON_CONFIG_DIR": daemon.root.appending("config"),
                "CORDON_ADMIN_POLICY_DIR": daemon.adminPolicyDirectory, "CORDON_TRUST_DIR": daemon.trustDirectory,
            ])
    }

    @Test func validateReportsEveryProblemWithoutADaemon() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let good = root.appending("good.json")
        let bad = root.appending("bad.json")
        try #"{"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "managed"}}"#
            .write(toFile: good, atomically: true, encoding: .utf8)
        try
            "{\"schema\": \"cordon.policy.v1\",\n \"pasteboard\": {\"copyOutt\": \"any\"},\n \"lock\": {\"idleTimeoutSeconds\": -5}}"
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let ok = try await runCommand(Binaries.cordon, ["policy", "validate", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        let failed = try await runCommand(Binaries.cordon, ["policy", "validate", good, bad])
        #expect(failed.status == 1)
        let output = failed.stdout + failed.stderr
        #expect(output.contains("\(bad):2:"))
        #expect(output.contains("/pasteboard/copyOutt"))
        #expect(output.contains("did you mean \"copyOut\""))
        #expect(output.contains("/lock/idleTimeoutSeconds"), "every problem of the file is reported")
    }

    @Test func pushShowExplainCheckAndAudit() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let file = daemon.root.appending("corp.json")
        try #"{"schema": "cordon.policy.v1", "documents": {"sendTo": "managed"}, "pasteboard": {"maxChars": 5}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)

        // An admin key is trusted: the admin file must be signed.
        let keygen = try await cordon(daemon, ["policy", "keygen", "--out", daemon.root.appending("admin")])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        try FileManager.default.createDirectory(atPath: daemon.trustDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: daemon.root.appending("admin.pub"), toPath: daemon.trustDirectory + "/admin.pub")
        let unsigned = try await cordon(daemon, ["policy", "push", file, "--admin"])
        #expect(unsigned.status != 0, "an unsigned admin file is refused")
        let sign = try await cordon(daemon, ["policy", "sign", file, "--key", daemon.root.appending("admin.key")])
        #expect(sign.status == 0, "\(sign.stderr)")
        let push = try await cordon(daemon, ["policy", "push", file, "--admin"])
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(FileManager.default.fileExists(atPath: daemon.adminPolicyDirectory + "/corp.json.sig"))

        let status = try await cordon(daemon, ["policy", "status", "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("corp.json") && status.stdout.contains("applied"))

        let show = try await cordon(daemon, ["policy", "show"])
        #expect(show.stdout.contains("/documents/sendTo") && show.stdout.contains("managed"))

        let explain = try await cordon(
            daemon,
            ["policy", "explain", "--app", "com.example.a", "--action", "document.send", "--target", "com.example.b"])
        #expect(explain.status == 0, "\(explain.stderr)")
        #expect(explain.stdout.contains("corp.json#/documents/sendTo"))

        let check = try await cordon(daemon, ["policy", "check", "--action", "pasteboard.copy", "--length", "50"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("5"), "the truncation obligation is shown: \(check.stdout)")
        let allowed = try await cordon(daemon, ["policy", "check", "--action", "document.send", "--target", "com.x.y"])
        #expect(allowed.status == 0, "no app is bound, so the target counts as managed: \(allowed.stdout)")

        // The user's own file lands in the user directory and can only tighten.
        let user = daemon.root.appending("mine.json")
        try #"{"schema": "cordon.policy.v1", "documents": {"sendTo": "none"}}"#
            .write(toFile: user, atomically: true, encoding: .utf8)
        let pushUser = try await cordon(daemon, ["policy", "push", user])
        #expect(pushUser.status == 0, "\(pushUser.stderr)")
        #expect(FileManager.default.fileExists(atPath: daemon.userPolicyDirectory + "/mine.json"))
        let denied = try await cordon(daemon, ["policy", "check", "--action", "document.send", "--target", "com.x.y"])
        #expect(denied.status == 1, "\(denied.stdout)")
        #expect(denied.stdout.contains("mine.json"), "the deciding rule is the user's file: \(denied.stdout)")

        let audit = try await cordon(daemon, ["audit", "--json"])
        #expect(audit.status == 0)
        #expect(audit.stdout.contains("document.send") && audit.stdout.contains("deny"))
        try await daemon.stop()
    }
}

extension PolicyCLITests {
    @Test func showJSONPrintsValuesAsJSONValues() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        try FileManager.default.createDirectory(atPath: daemon.adminPolicyDirectory, withIntermediateDirectories: true)
        try #"""
        {"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "blocked", "maxChars": 5},
         "documents": {"allowedTargets": ["com.example.mail"], "saveLocations": ["/srv/*"]},
         "overrides": [{"apps": ["com.example.mail"], "documents": {"saveLocations": ["/srv/mail/*"]}}]}
        """#.write(toFile: daemon.adminPolicyDirectory + "/corp.json", atomically: true, encoding: .utf8)
        _ = try await cordon(daemon, ["policy", "reload"])
        let shown = try await cordon(daemon, ["policy", "show", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [[String: Any]])
        func value(_ path: String) -> Any? { settings.first { $0["path"] as? String == path }?["value"] }
        #expect(value("/pasteboard/copyOut") as? String == "blocked")
        #expect(value("/pasteboard/maxChars") as? Int == 5)
        #expect(value("/pasteboard/clearOnLock") as? Bool == false)
        #expect(value("/documents/allowedTargets") as? [String] == ["com.example.mail"])
        #expect(value("/documents/allowedSources") is NSNull, "no allow-list is null")
        #expect(
            value("/overrides/com.example.mail/documents/saveLocations") as? [[String]] == [
                ["/srv/*"], ["/srv/mail/*"],
            ])
        #expect(value("/passcode/minLength") as? Int == 4)
        let rules = try #require(
            settings.first { $0["path"] as? String == "/pasteboard/copyOut" }?["rules"] as? [String])
        #expect(rules == [daemon.adminPolicyDirectory + "/corp.json#/pasteboard/copyOut"])
    }
}
