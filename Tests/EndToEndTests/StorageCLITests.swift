import Foundation
import Testing

/// `cordon storage` and `cordon wipe --app` against the real daemon (docs/CLI.md). cordond, the
/// CLI and the other app run as an ordinary user outside test mode (``UserAgent``).
@Suite struct StorageCLITests {
    /// An app (a raw varlink client that hardens itself) that stores `inbox` (`put`) or reads it.
    static let mail = """
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.mail"})
        harden()
        if sys.argv[2] == "put":
            print(json.dumps({"put": error(call(s, "io.cordon.Storage.Put", {"name": "inbox", "value": "bWFpbCdz"}))}))
        else:
            got = call(s, "io.cordon.Storage.Get", {"name": "inbox"})
            print(json.dumps({"error": error(got), "value": got.get("parameters", {}).get("value")}))
        """

    @Test func anAdministratorReadsWritesAndWipesOneAppsRecordsWithThePasscode() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#)
        defer { agent.cleanUp() }
        let stored = try await agent.attack(Self.mail, ["put"])
        #expect(stored["put"] is NSNull, "\(stored)")
        let passcode = UserAgent.passcode + "\n"
        let app = ["--app", "com.example.notes", "--passcode-stdin"]
        let put = try await agent.cli(["storage", "put"] + app + ["draft", "hello from the CLI"], input: passcode)
        #expect(put.status == 0, "\(put.stderr)")
        let get = try await agent.cli(["storage", "get"] + app + ["draft"], input: passcode)
        #expect(get.stdout == "hello from the CLI")
        #expect(try await agent.cli(["storage", "ls"] + app, input: passcode).stdout == "draft\n")
        let usage = try await agent.cli(["storage", "usage", "--json"])
        #expect(usage.stdout.contains("com.example.notes") && usage.stdout.contains("com.example.mail"))
        let wrong = try await agent.cli(["storage", "get"] + app + ["draft"], input: "Wrong-Guess-4409\n")
        #expect(wrong.status != 0)
        let missing = try await agent.cli(["storage", "get"] + app + ["nothing"], input: passcode)
        #expect(missing.stderr.contains("no record named \"nothing\"") && missing.stderr.contains("hint:"))
        let rm = try await agent.cli(["storage", "rm"] + app + ["draft"], input: passcode)
        #expect(rm.stdout == "deleted draft\n")
        _ = try await agent.cli(["storage", "put"] + app + ["again", "x"], input: passcode)
        let wipe = try await agent.cli(["wipe", "--app", "com.example.notes", "--passcode-stdin"], input: passcode)
        #expect(wipe.status == 0, "\(wipe.stderr)")
        #expect(try await agent.cli(["storage", "ls"] + app, input: passcode).stdout == "")
        let untouched = try await agent.attack(Self.mail, ["get"])
        #expect(untouched["value"] as? String == "bWFpbCdz", "the other app is untouched: \(untouched)")
        let audit = try await agent.cli(["audit", "--app", "com.example.notes", "--json"])
        let actions = audit.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["action"] as? String
        }
        #expect(
            actions.contains("storage.get") && actions.contains("storage.put") && actions.contains("storage.wipe"),
            "\(actions)")
    }
}
