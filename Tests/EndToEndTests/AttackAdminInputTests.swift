import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Admin policy": the user controls cordond's flags and environment (its
/// unit file is theirs), so outside test mode cordond refuses the flags that set what an
/// administrator decides, and admin paths another user could write. Test mode says so everywhere.
/// cordond and the CLI run as an ordinary user (``TestUser``, ``UserAgent``).
@Suite struct AttackAdminInputTests {
    /// Runs cordond as the user with `arguments` on a fresh directory of the user's and returns how
    /// it exited and what it said.
    func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)", root.path])
        return try await runCommand(
            URL(fileURLWithPath: TestUser.asUser[0]),
            Array(TestUser.asUser.dropFirst()) + [
                Binaries.cordond.path, "--runtime-dir", root.appending("run"), "--data-dir", root.appending("data"),
                "--config-dir", root.appending("config"), "--log-target", "stderr",
            ] + arguments, environment: UserAgent.environment(home: root.path).merging(environment) { $1 })
    }

    @Test(arguments: [
        ["--max-attempts", "100"], ["--idle-timeout", "0"], ["--reauth-grace", "86400"],
        ["--on-max-attempts", "lockout"], ["--backoff-base-seconds", "0"], ["--backoff-max-seconds", "1"],
        ["--insecure-fast-kdf"],
        ["--kdf-target-ms", "1"], ["--identity-browser", "/bin/true"], ["--identity-poll-delay", "0.01"],
        ["--posture-root", "/tmp"], ["--posture-interval", "1"],
    ])
    func valueFlagsAreRefusedOutsideTestMode(arguments: [String]) async throws {
        let result = try await start(arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("refusing to start: \(arguments[0]) set what an administrator decides"))
        #expect(result.stderr.contains("hint:"))
    }

    @Test func anAdminDirectoryAnotherUserCanWriteIsRefused() async throws {
        let planted = try TemporaryDirectory()
        defer { planted.remove() }
        chmod(planted.path, 0o755)  // the user reaches what is planted in it
        let admin = planted.appending("admin")
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: admin)
        for (flag, variable) in [
            ("--admin-policy-dir", "CORDON_ADMIN_POLICY_DIR"), ("--trust-dir", "CORDON_TRUST_DIR"),
        ] {
            let byFlag = try await start([flag, admin])
            #expect(byFlag.status == 2)
            #expect(
                byFlag.stderr.contains("\(flag) names \(admin): component 'admin' is not owned by root (uid 65534)"))
            let byEnvironment = try await start([], environment: [variable: admin])
            #expect(byEnvironment.status == 2)
            #expect(byEnvironment.stderr.contains("\(variable) names \(admin)"))
        }
        // Nor an "installation" of the user's own, which would make a Flatpak binding match their code.
        let installation = try await start(["--flatpak-installation", admin])
        #expect(installation.status == 2)
        #expect(
            installation.stderr.contains(
                "--flatpak-installation names \(admin): component 'admin' is not owned by root"))
        // A prompt program of the user's own is no better.
        let program = planted.appending("prompt")
        try "#!/bin/sh\n".write(toFile: program, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: program)
        let prompt = try await start(["--prompt-program", program])
        #expect(prompt.status == 2)
        #expect(
            prompt.stderr.contains(
                "--prompt-program names \(program): component 'prompt' is writable by group or others"))
    }

    /// Without `--flatpak-installation`, the system installation (`/var/lib/flatpak`) is opened
    /// at start like every admin input (held at its deepest existing directory when Flatpak is not
    /// installed), never used by name afterwards.
    @Test func theSystemFlatpakInstallationIsOpenedLikeAnyAdminInput() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
        defer { agent.cleanUp() }
        let line = try #require(
            agent.log.split(separator: "\n").first {
                $0.contains("admin input opened") && $0.contains("the system Flatpak installation")
            }, "\(agent.log)")
        #expect(line.contains("/var/lib/flatpak"), "\(line)")
        let exists = FileManager.default.fileExists(atPath: "/var/lib/flatpak")
        #expect(line.contains(exists ? "state=held" : "not there yet"), "\(line)")
    }

    /// Test mode (needed here: it is what is shown) is announced in the log, the status, doctor
    /// and every audit record.
    @Test func testModeIsShownInStatusDoctorAndEveryAuditRecord() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, testMode: true)
        defer { agent.cleanUp() }
        #expect(agent.log.contains("TEST MODE"))
        // A rejected file is audited.
        let policies = agent.home.appending("config/policy.d")
        try await NobodyAgent.run(
            TestUser.asUser + ["/bin/sh", "-c", "mkdir -p \"$0\" && echo '{}' > \"$0/bad.json\"", policies])
        _ = try await agent.cli(["policy", "reload"])  // reports the rejected file; the audit is checked below
        let audit = try await agent.cli(["audit", "--json"])
        #expect(audit.status == 0, "\(audit.stderr)")
        let records = audit.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(!records.isEmpty)
        #expect(records.allSatisfy { $0["testMode"] as? Bool == true }, "\(audit.stdout)")
        #expect(records.contains { ($0["reason"] as? String ?? "").contains("bad.json") }, "\(audit.stdout)")
        let status = try await agent.cli(["status"])
        #expect(status.stdout.contains("TEST MODE"))
        let doctor = try await agent.cli(["doctor"])
        #expect(doctor.stdout.contains("warn") && doctor.stdout.contains("TEST MODE"), "\(doctor.stdout)")
    }
}
