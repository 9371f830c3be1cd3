import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App storage": a same-user Python program (raw varlink and `sqlite3`)
/// tries to read another app's records, to move a sealed record into another slot, and to find a
/// known name or value in the storage file and its WAL.
@Suite struct StorageAttackTests {
    static let secretName = "attack-marker-name-7301"
    static let secretValue = "attack-marker-value-5519"

    @Test func anotherAppOrAnUnregisteredCallerReadsNothingOfTheApps() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let notes = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let store = try SecureStore(app: notes, dataDirectory: daemon.root.appending("data"))
        try await store.put(Self.secretName, Data(Self.secretValue.utf8))
        let answer = try await AttackScript.run(
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
            out["otherApp"] = error(call(s, "io.cordon.Storage.Get", get))
            out["otherList"] = call(s, "io.cordon.Storage.List", {})["parameters"]["names"]
            out["otherNamespace"] = error(call(s, "io.cordon.Storage.Get", dict(get, namespace="default")))
            own = base64.b64encode(b"python's own").decode()
            out["ownPut"] = error(call(s, "io.cordon.Storage.Put", {"name": "mine", "value": own}))
            out["ownGet"] = base64.b64decode(call(s, "io.cordon.Storage.Get", {"name": "mine"})["parameters"]["value"]).decode()
            print(json.dumps(out))
            """, [daemon.socketPath, Self.secretName], in: daemon.root)
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
        // The notes app's record is untouched, and the wrong passcode counted.
        #expect(try await store.get(Self.secretName) == Data(Self.secretValue.utf8))
        #expect(try await client.status().failedAttempts == 1)
        await notes.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func anUnmanagedCallerUnderTheAppsIdGetsNothing() async throws {
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let daemon = try await AttackIdentityTests.daemon(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.notes", "executables": ["\#(runner)"]}]}}
                """#)
        defer { daemon.cleanUp() }
        let notes = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        try await SecureStore(app: notes, dataDirectory: daemon.root.appending("data"))
            .put(Self.secretName, Data(Self.secretValue.utf8))
        await notes.close()
        // Python is not the bound executable: under the app's id it registers unmanaged.
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            out = {"managed": reg["parameters"]["managed"]}
            out["get"] = error(call(s, "io.cordon.Storage.Get", {"name": sys.argv[2]}))
            out["list"] = error(call(s, "io.cordon.Storage.List", {}))
            out["put"] = error(call(s, "io.cordon.Storage.Put", {"name": sys.argv[2], "value": ""}))
            print(json.dumps(out))
            """, [daemon.socketPath, Self.secretName], in: daemon.root)
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["get"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["list"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["put"] as? String == "io.cordon.App.NotManaged")
        try await daemon.stop()
    }

    @Test func aRecordMovedIntoAnotherSlotFailsAndNothingIsInPlaintextOnDisk() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let answer = try await AttackScript.run(
            """
            import base64, sqlite3
            s = connect(sys.argv[1])
            name, value, path = sys.argv[2], sys.argv[3], sys.argv[4]
            call(s, "io.cordon.App.Register", {"appId": "com.example.python"})
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
            [
                daemon.socketPath, Self.secretName, Self.secretValue,
                daemon.root.appending("data/storage/com.example.python.sqlite"),
            ], in: daemon.root)
        #expect((answer["put"] as? [Any])?.allSatisfy { $0 is NSNull } == true, "\(answer)")
        let found = try #require(answer["found"] as? [String: Any])
        #expect((found["lite"] as? [String]) == [], "the database file holds no name or value: \(found)")
        #expect((found["-wal"] as? [String]) == [], "the WAL holds no name or value: \(found)")
        #expect((found["-wal-size"] as? Int ?? 0) > 0, "the records were in the WAL when it was searched")
        #expect(answer["rows"] as? Int == 2)
        // One of the two rows now holds the other's sealed value: it fails to open, typed.
        #expect((answer["errors"] as? [String]) == ["None", "io.cordon.Storage.Tampered"], "\(answer)")
        await client.close()
        try await daemon.stop()
    }
}
