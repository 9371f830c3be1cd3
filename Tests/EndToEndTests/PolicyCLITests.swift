import Foundation
import Testing

/// `cordon policy …` and `cordon audit` against a real `cordond`. cordond and the user's CLI are
/// one ordinary user (``UserAgent``: outside test mode); the administrator's commands (keygen,
/// sign, push --admin) run as root, who owns the admin policy and the trust directory.
@Suite struct PolicyCLITests {
    /// The user's `cordon`, with the agent's directories.
    func cordon(_ agent: UserAgent, _ arguments: [String]) async throws -> CommandResult {
        try await agent.cli(arguments, environment: Self.directories(agent))
    }

    /// The administrator's `cordon`, as root: it cannot talk to the user's agent (it serves only
    /// its own uid), so it names no agent at all.
    func admin(_ agent: UserAgent, _ arguments: [String]) async throws -> CommandResult {
        try await runCommand(
            Binaries.cordon, ["--socket", agent.system.appending("no-agent.sock")] + arguments,
            environment: Self.directories(agent))
    }

    static func directories(_ agent: UserAgent) -> [String: String] {
        [
            "CORDON_CONFIG_DIR": agent.home.appending("config"),
            "CORDON_ADMIN_POLICY_DIR": agent.system.appending("admin"),
            "CORDON_TRUST_DIR": agent.system.appending("trust"),
        ]
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
        // As the user, with no agent anywhere.
        let cordon = URL(fileURLWithPath: UserAgent.asUser[0])
        let asUser = Array(UserAgent.asUser.dropFirst()) + [Binaries.cordon.path]
        let ok = try await runCommand(cordon, asUser + ["policy", "validate", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        let failed = try await runCommand(cordon, asUser + ["policy", "validate", good, bad])
        #expect(failed.status == 1)
        let output = failed.stdout + failed.stderr
        #expect(output.contains("\(bad):2:"))
        #expect(output.contains("/pasteboard/copyOutt"))
        #expect(output.contains("did you mean \"copyOut\""))
        #expect(output.contains("/lock/idleTimeoutSeconds"), "every problem of the file is reported")
    }

    @Test func pushShowExplainCheckAndAudit() async throws {
        // Unbound apps trusted, as the suite always had them (once keys are trusted this unsigned
        // file is rejected, and its last good version stays in force).
        let agent = try await UserAgent(policy: AttackIdentityTests.trusted)
        defer { agent.cleanUp() }
        let file = agent.system.appending("corp.json")
        try #"{"schema": "cordon.policy.v1", "documents": {"sendTo": "managed"}, "pasteboard": {"maxChars": 5}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)

        // An admin key is trusted: the admin file must be signed.
        let keygen = try await admin(agent, ["policy", "keygen", "--out", agent.system.appending("admin")])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        try FileManager.default.copyItem(
            atPath: agent.system.appending("admin.pub"), toPath: agent.system.appending("trust/admin.pub"))
        let unsigned = try await admin(agent, ["policy", "push", file, "--admin"])
        #expect(unsigned.status != 0, "an unsigned admin file is refused")
        let sign = try await admin(agent, ["policy", "sign", file, "--key", agent.system.appending("admin.key")])
        #expect(sign.status == 0, "\(sign.stderr)")
        let push = try await admin(agent, ["policy", "push", file, "--admin"])
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(FileManager.default.fileExists(atPath: agent.system.appending("admin/corp.json.sig")))

        // The agent picks root's file up by itself (root's push cannot reach it to reload).
        try await eventually("the agent applied corp.json") {
            let status = try await cordon(agent, ["policy", "status", "--json"])
            return status.stdout.contains("corp.json") && status.stdout.contains("applied")
        }
        let status = try await cordon(agent, ["policy", "status", "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("corp.json") && status.stdout.contains("applied"))

        let show = try await cordon(agent, ["policy", "show"])
        #expect(show.stdout.contains("/documents/sendTo") && show.stdout.contains("managed"))

        let explain = try await cordon(
            agent,
            ["policy", "explain", "--app", "com.example.a", "--action", "document.send", "--target", "com.example.b"])
        #expect(explain.status == 0, "\(explain.stderr)")
        #expect(explain.stdout.contains("corp.json#/documents/sendTo"))

        let check = try await cordon(agent, ["policy", "check", "--action", "pasteboard.copy", "--length", "50"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("5"), "the truncation obligation is shown: \(check.stdout)")
        let allowed = try await cordon(agent, ["policy", "check", "--action", "document.send", "--target", "com.x.y"])
        #expect(allowed.status == 0, "no app is bound, so the target counts as managed: \(allowed.stdout)")

        // The user's own file lands in the user directory and can only tighten.
        let user = agent.home.appending("mine.json")
        try #"{"schema": "cordon.policy.v1", "documents": {"sendTo": "none"}}"#
            .write(toFile: user, atomically: true, encoding: .utf8)
        try await agent.give(user)
        let pushUser = try await cordon(agent, ["policy", "push", user])
        #expect(pushUser.status == 0, "\(pushUser.stderr)")
        #expect(FileManager.default.fileExists(atPath: agent.home.appending("config/policy.d/mine.json")))
        let denied = try await cordon(agent, ["policy", "check", "--action", "document.send", "--target", "com.x.y"])
        #expect(denied.status == 1, "\(denied.stdout)")
        #expect(denied.stdout.contains("mine.json"), "the deciding rule is the user's file: \(denied.stdout)")

        let audit = try await cordon(agent, ["audit", "--json"])
        #expect(audit.status == 0)
        #expect(audit.stdout.contains("document.send") && audit.stdout.contains("deny"))
    }
}

extension PolicyCLITests {
    @Test func showJSONPrintsValuesAsJSONValues() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#)
        defer { agent.cleanUp() }
        try #"""
        {"schema": "cordon.policy.v1", "pasteboard": {"copyOut": "blocked", "maxChars": 5},
         "documents": {"allowedTargets": ["com.example.mail"], "saveLocations": ["/srv/*"]},
         "overrides": [{"apps": ["com.example.mail"], "documents": {"saveLocations": ["/srv/mail/*"]}}]}
        """#.write(toFile: agent.system.appending("admin/corp.json"), atomically: true, encoding: .utf8)
        _ = try await cordon(agent, ["policy", "reload"])
        let shown = try await cordon(agent, ["policy", "show", "--json"])
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
        #expect(rules == [agent.system.appending("admin/corp.json") + "#/pasteboard/copyOut"])
    }
}
