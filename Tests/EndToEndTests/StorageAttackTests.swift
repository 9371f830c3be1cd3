import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App storage": a same-user Python program (raw varlink and `sqlite3`)
/// tries to read another app's records, to move a sealed record into another slot, and to find a
/// known name or value in the storage file and its WAL. The agent, the apps and the attacker
/// are one ordinary user (``UserAgent``: outside test mode, the admin policy root's).
@Suite struct StorageAttackTests {
    static let secretName = "attack-marker-name-7301"
    static let secretValue = "attack-marker-value-5519"
    static let trusted = AttackIdentityTests.trusted

    /// Writes the notes app's record through the CLI with the passcode, as the user would.
    static func putNotesRecord(_ agent: UserAgent) async throws {
        let put = try await agent.cli(
            ["storage", "put", "--app", "com.example.notes", "--passcode-stdin", secretName, secretValue],
            input: UserAgent.passcode + "\n")
        try #require(put.status == 0, "storage put: \(put.stderr)")
    }

    @Test func anotherAppOrAnUnregisteredCallerReadsNothingOfTheApps() async throws {
        let agent = try await UserAgent(policy: Self.trusted)
        defer { agent.cleanUp() }
        try await Self.putNotesRecord(agent)
        // The notes app itself runs (a live registration of its id), hardened by CordonKit.
        _ = try await agent.startNotes()
        let answer = try await agent.attack(
            """
            import base64
            s = connect(sys.argv[1])
            out = {}
            get = {"name": sys.argv[2]}
            out["unregistered"] = error(call(s, "io.cordon.Storage.Get", get))
            out["unregisteredList"] = error(call(s, "io.cordon.Storage.List", {}))
            out["namedNoPasscode"] = error(call(s, "io.cordon.Storage.Get", dict(get, appId="com.example.notes")))
            out["namedWrongPasscode"] = error(
                call(s, "io.cordon.Storage.Get", dict(get, appId="com.example.notes", passcode="0000")))
            out["sameId"] = error(call(s, "io.cordon.App.Register", {"appId": "com.example.notes"}))
            call(s, "io.cordon.App.Register", {"appId": "com.example.python"})
            harden()
            out["otherApp"] = error(call(s, "io.cordon.Storage.Get", get))
            out["otherList"] = call(s, "io.cordon.Storage.List", {})["parameters"]["names"]
            out["otherNamespace"] = error(call(s, "io.cordon.Storage.Get", dict(get, namespace="default")))
            own = base64.b64encode(b"python's own").decode()
            out["ownPut"] = error(call(s, "io.cordon.Storage.Put", {"name": "mine", "value": own}))
            out["ownGet"] = base64.b64decode(call(s, "io.cordon.Storage.Get", {"name": "mine"})["parameters"]["value"]).decode()
            print(json.dumps(out))
            """, [Self.secretName])
        #expect(answer["unregistered"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["unregisteredList"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["namedNoPasscode"] as? String == "io.cordon.Agent.PasscodeRequired")
        #expect(answer["namedWrongPasscode"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(answer["sameId"] as? String == "io.cordon.App.AppIdInUse")
        #expect(answer["otherApp"] as? String == "io.cordon.Storage.NotFound")
        #expect((answer["otherList"] as? [String]) == [])
        #expect(answer["otherNamespace"] as? String == "io.cordon.Storage.NotFound")
        #expect(answer["ownPut"] is NSNull)
        #expect(answer["ownGet"] as? String == "python's own")
        // The wrong passcode counted, and the notes app's record is untouched.
        let status = try await agent.cli(["status", "--json"])
        let fields = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(fields?["failedAttempts"] as? Int == 1, "\(status.stdout)")
        // (A right passcode, below, resets the count.)
        let get = try await agent.cli(
            ["storage", "get", "--app", "com.example.notes", "--passcode-stdin", Self.secretName],
            input: UserAgent.passcode + "\n")
        #expect(get.stdout.contains(Self.secretValue), "\(get.stdout)\(get.stderr)")
    }

    @Test func anUnmanagedCallerUnderTheAppsIdGetsNothing() async throws {
        let agent = try await UserAgent(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.notes", "executables": ["\#(Binaries.notes.path)"]}]}}
                """#)
        defer { agent.cleanUp() }
        try await Self.putNotesRecord(agent)
        // Python is not the bound executable: under the app's id it registers unmanaged.
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            out = {"managed": reg["parameters"]["managed"]}
            out["get"] = error(call(s, "io.cordon.Storage.Get", {"name": sys.argv[2]}))
            out["list"] = error(call(s, "io.cordon.Storage.List", {}))
            out["put"] = error(call(s, "io.cordon.Storage.Put", {"name": sys.argv[2], "value": ""}))
            print(json.dumps(out))
            """, [Self.secretName])
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["get"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["list"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["put"] as? String == "io.cordon.App.NotManaged")
    }

    @Test func aRecordMovedIntoAnotherSlotFailsAndNothingIsInPlaintextOnDisk() async throws {
        let agent = try await UserAgent(policy: Self.trusted)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            import base64, sqlite3
            s = connect(sys.argv[1])
            name, value, path = sys.argv[2], sys.argv[3], sys.argv[4]
            call(s, "io.cordon.App.Register", {"appId": "com.example.python"})
            harden()
            put = lambda n, v: error(call(s, "io.cordon.Storage.Put",
                                           {"name": n, "value": base64.b64encode(v.encode()).decode()}))
            out = {"put": [put(name, value), put("victim", "the victim's value")]}
            found = {}
            for f in [path, path + "-wal"]:
                data = open(f, "rb").read() if os.path.exists(f) else b""
                found[f[-4:]] = [m for m in (name, value, "victim") if m.encode() in data]
                found[f[-4:] + "-size"] = len(data)
            out["found"] = found
            # Copy the marker's sealed value over the victim's row.
            db = sqlite3.connect(path)
            rows = db.execute("SELECT lookup, sealedValue FROM records").fetchall()
            out["rows"] = len(rows)
            for lookup, sealed in rows:
                db.execute("UPDATE records SET sealedValue = ? WHERE lookup != ?", (sealed, lookup))
                break
            db.commit()
            db.close()
            results = [call(s, "io.cordon.Storage.Get", {"name": n}) for n in (name, "victim")]
            out["errors"] = sorted(str(error(r)) for r in results)
            print(json.dumps(out))
            """,
            [Self.secretName, Self.secretValue, agent.home.appending("data/storage/com.example.python.sqlite")])
        #expect((answer["put"] as? [Any])?.allSatisfy { $0 is NSNull } == true, "\(answer)")
        let found = try #require(answer["found"] as? [String: Any])
        #expect((found["lite"] as? [String]) == [], "the database file holds no name or value: \(found)")
        #expect((found["-wal"] as? [String]) == [], "the WAL holds no name or value: \(found)")
        #expect((found["-wal-size"] as? Int ?? 0) > 0, "the records were in the WAL when it was searched")
        #expect(answer["rows"] as? Int == 2)
        // One of the two rows now holds the other's sealed value: it fails to open, typed.
        #expect((answer["errors"] as? [String]) == ["None", "io.cordon.Storage.Tampered"], "\(answer)")
    }
}
