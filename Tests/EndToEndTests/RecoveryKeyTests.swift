import CordonStore
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Recovery key": `cordon init` prints a recovery key once; on a machine
/// whose TPM does not hold the sealed object (here: the database moved to a second swtpm),
/// `cordon init --recovery` restores the same master key under a new passcode and a new recovery
/// key. Against the real daemon, the real CLI and two TPM simulators; cordond, the CLI and the
/// apps run as an ordinary user (``UserAgent``).
@Suite(.serialized) struct RecoveryKeyTests {
    static let passcode = "2468"
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// cordond on `simulator`, its home laid out by `prepareHome`. Test mode: only test mode takes
    /// a simulator's TCTI (and the back-off and grace flags); trace logging, for the check that
    /// no recovery key is ever logged.
    func agent(_ simulator: SoftwareTPM, prepareHome: (TemporaryDirectory) throws -> Void = { _ in }) async throws
        -> UserAgent
    {
        try await UserAgent(
            policy: Self.policy, initialize: false,
            arguments: [
                "--tpm-tcti", simulator.tcti, "--backoff-base-seconds", "0", "--reauth-grace", "0", "--log-level",
                "trace",
            ], testMode: true, prepareHome: prepareHome)
    }

    /// The recovery key in `output`, which must hold exactly one.
    func recoveryKey(in output: String) throws -> String {
        let keys = output.matches(of: #/[0-9]{6}(-[0-9]{6}){7}/#).map { String($0.output.0) }
        #expect(keys.count == 1, "\(output)")
        return try #require(keys.first)
    }

    /// The app's key as GetKey gives it (to an app run as the user) once the container is unlocked
    /// with `passcode`; the container is locked again.
    func appKey(_ agent: UserAgent, passcode: String) async throws -> String {
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
        let app = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            key = call(s, "io.cordon.App.GetKey")
            print(json.dumps({"error": error(key), "key": key.get("parameters", {}).get("key")}))
            """)
        let locked = try await agent.cli(["lock"])
        try #require(locked.status == 0, "lock: \(locked.stderr)")
        return try #require(app["key"] as? String, "\(app)")
    }

    /// A varlink call of the agent's made by a program run as the user, with the recovery key
    /// (`RECOVERY`) and the passcodes in its environment, never its argv: the error and its reason.
    func call(_ agent: UserAgent, _ method: String, recovery: String = "", passcode: String) async throws -> (
        error: String?, reason: String?
    ) {
        let reply = try await agent.attack(
            """
            parameters = {"passcode": os.environ["PASSCODE"]}
            if sys.argv[2] == "io.cordon.Agent.Recover":
                parameters["recoveryKey"] = os.environ["RECOVERY"]
            r = call(connect(sys.argv[1]), sys.argv[2], parameters)
            print(json.dumps({"error": error(r), "reason": r.get("parameters", {}).get("reason")}))
            """, [method], environment: ["RECOVERY": recovery, "PASSCODE": passcode])
        return (reply["error"] as? String, reply["reason"] as? String)
    }

    /// `failedAttempts` as `cordon status --json` prints it.
    func failedAttempts(_ agent: UserAgent) async throws -> Int? {
        let status = try await agent.cli(["status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        return object?["failedAttempts"] as? Int
    }

    @Test func theRecoveryKeyRestoresTheSameKeysOnAnotherTPMAndIsReplaced() async throws {
        let first = try SoftwareTPM()
        defer { first.stop() }
        let second = try SoftwareTPM()
        defer { second.stop() }
        let original = try await agent(first)
        defer { original.cleanUp() }
        let initialized = try await original.cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(initialized.stdout.contains("Keep it offline"), "\(initialized.stdout)")
        let recovery = try recoveryKey(in: initialized.stdout)
        let before = try await appKey(original, passcode: Self.passcode)
        original.terminate()
        var logs = original.log

        // The same database, another machine's TPM: the passcode is refused, with the way out named.
        let moved = try await agent(second) { home in
            for directory in ["data", "config"]
            where FileManager.default.fileExists(atPath: original.home.appending(directory)) {
                try FileManager.default.copyItem(
                    atPath: original.home.appending(directory), toPath: home.appending(directory))
            }
        }
        defer { moved.cleanUp() }
        let unlocked = try await call(moved, "io.cordon.Agent.Unlock", passcode: Self.passcode)
        #expect(unlocked.error == "io.cordon.Agent.HardwareKeyRejected", "the moved database unlocked")
        #expect(unlocked.reason?.contains("cordon init --recovery") == true, "\(String(describing: unlocked.reason))")
        let status = try await moved.cli(["status"])
        #expect(status.stdout.contains("restore with the recovery key, `cordon init --recovery`"), "\(status.stdout)")
        let doctor = try await moved.cli(["doctor"])
        #expect(doctor.stdout.contains("cordon init --recovery"), "\(doctor.stdout)")

        // A wrong key (well formed: every group passes its check) is refused and counted.
        let wrong = String(repeating: "000000-", count: 7) + "000000"
        let failedBefore = try #require(try await failedAttempts(moved))
        let refused = try await call(moved, "io.cordon.Agent.Recover", recovery: wrong, passcode: "8642")
        #expect(refused.error == "io.cordon.Agent.InvalidRecoveryKey", "a wrong recovery key was accepted")
        #expect(refused.reason?.contains("does not open") == true, "\(String(describing: refused.reason))")
        #expect(try await failedAttempts(moved) == failedBefore + 1)
        // A mistyped digit is caught by its group's check, before any key is derived, and not counted.
        var typo = Array(recovery)
        typo[2] = typo[2] == "1" ? "2" : "1"
        let mistyped = try await call(moved, "io.cordon.Agent.Recover", recovery: String(typo), passcode: "8642")
        #expect(mistyped.error == "io.cordon.Agent.InvalidRecoveryKey", "a mistyped recovery key was accepted")
        #expect(
            mistyped.reason == "group 1 is not a multiple of 11: a digit in it is mistyped",
            "\(String(describing: mistyped.reason))")
        #expect(try await failedAttempts(moved) == failedBefore + 1)

        // The CLI reads the key from stdin (never argv), sets a new passcode and prints a new key.
        let restored = try await moved.cli(
            ["init", "--recovery", "--recovery-stdin", "--passcode-stdin"], input: recovery + "\n8642\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("NEW recovery key"), "\(restored.stdout)")
        let next = try recoveryKey(in: restored.stdout)
        #expect(next != recovery)
        let databasePath = moved.home.appending("data/cordon.sqlite")
        let record = try #require(try CordonDatabase(path: databasePath, readOnly: true).loadWrappedKey())
        #expect(record.protection == .tpm)
        #expect(try await appKey(moved, passcode: "8642") == before)

        // The old key no longer works; the new one does.
        let replaced = try await call(moved, "io.cordon.Agent.Recover", recovery: recovery, passcode: "1357")
        #expect(replaced.error == "io.cordon.Agent.InvalidRecoveryKey", "the replaced recovery key still works")
        // A passcode change keeps the recovery key valid.
        let changed = try await moved.cli(["passwd", "--passcode-stdin"], input: "8642\n9753\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        let recovered = try await call(moved, "io.cordon.Agent.Recover", recovery: next, passcode: "1357")
        #expect(recovered.error == nil, "\(String(describing: recovered.error))")
        #expect(try await appKey(moved, passcode: "1357") == before)

        // Never in the daemon's log, the audit log or the database.
        logs += moved.log
        let audit = try await moved.cli(["audit", "--json"])
        var stored = Data()
        for suffix in ["", "-wal"] {
            stored += (try? Data(contentsOf: URL(fileURLWithPath: databasePath + suffix))) ?? Data()
        }
        for key in [recovery, next] {
            let digits = key.replacingOccurrences(of: "-", with: "")
            for text in [logs, audit.stdout, audit.stderr, String(decoding: stored, as: UTF8.self)] {
                #expect(!text.contains(key) && !text.contains(digits))
            }
        }
    }
}
