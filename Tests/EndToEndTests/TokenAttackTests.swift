import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Software tokens": a same-user Python program (raw varlink, `sqlite3`)
/// asks for codes without being a verified managed code reader, while the container is locked,
/// greps the database and its WAL for a seed, and kills cordond right after an HOTP code to make
/// it hand out the same counter again.
@Suite struct TokenAttackTests {
    /// A 20-byte seed that would be easy to spot on disk, and its base32 form.
    static let seed = "cordon-seed-marker-1"
    static let seedBase32 = "MNXXEZDPNYWXGZLFMQWW2YLSNNSXELJR"
    static let passcode = "2468"

    /// A daemon whose admin policy trusts unbound app ids (`com.example.reader` and
    /// `com.example.other` register managed), binds `com.example.notes` to the test runner (so
    /// Python under that id is unmanaged), and lists one code reader.
    static func daemon(dataAccess: String) async throws -> DaemonProcess {
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let daemon = try await DaemonProcess.started()
        try #"""
        {"schema": "cordon.policy.v1",
         "apps": {"managed": [{"id": "com.example.notes", "executables": ["\#(runner)"]}]},
         "tokens": {"codeReaders": ["com.example.reader"], "dataAccess": "\#(dataAccess)"}}
        """#.write(toFile: daemon.adminPolicyDirectory + "/tokens.json", atomically: true, encoding: .utf8)
        let client = try await daemon.client()
        _ = try await client.reloadPolicy()
        try await client.initialize(passcode: passcode)
        try await client.unlock(passcode: passcode)
        await client.close()
        return daemon
    }

    static func otpauth(_ kind: String, counter: Int = 0) -> String {
        "otpauth://\(kind)/Example:alice?secret=\(seedBase32)&issuer=Example"
            + (kind == "hotp" ? "&counter=\(counter)" : "")
    }

    @Test func onlyAVerifiedManagedCodeReaderWhileUnlockedGetsCodes() async throws {
        let daemon = try await Self.daemon(dataAccess: "whenUnlocked")
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            sock, uri, passcode = sys.argv[1], sys.argv[2], sys.argv[3]
            out = {}
            s = connect(sock)
            imp = call(s, "io.cordon.Tokens.Import", {"data": uri, "passcode": passcode})
            out["import"] = error(imp)
            serial = imp["parameters"]["tokens"][0]["serial"]
            out["again"] = error(call(s, "io.cordon.Tokens.Import", {"data": uri, "passcode": passcode}))
            out["unregistered"] = error(call(s, "io.cordon.Tokens.Code", {"serial": serial}))
            out["unregisteredList"] = error(call(s, "io.cordon.Tokens.List", {}))
            out["wrongPasscode"] = error(call(s, "io.cordon.Tokens.Code", {"serial": serial, "passcode": "0000"}))
            notes = connect(sock)
            call(notes, "io.cordon.App.Register", {"appId": "com.example.notes"})
            out["unmanaged"] = error(call(notes, "io.cordon.Tokens.Code", {"serial": serial}))
            other = connect(sock)
            call(other, "io.cordon.App.Register", {"appId": "com.example.other"})
            out["notReader"] = error(call(other, "io.cordon.Tokens.Code", {"serial": serial}))
            reader = connect(sock)
            call(reader, "io.cordon.App.Register", {"appId": "com.example.reader"})
            code = call(reader, "io.cordon.Tokens.Code", {"serial": serial})
            out["reader"] = error(code)
            out["code"] = code.get("parameters", {}).get("code")
            out["readerManagement"] = error(call(reader, "io.cordon.Tokens.Remove", {"serial": serial, "passcode": "0000"}))
            out["noPasscode"] = [error(call(reader, m, p)) for m, p in [
                ("io.cordon.Tokens.Import", {"data": uri}), ("io.cordon.Tokens.Rename", {"serial": serial, "nickname": "x"}),
                ("io.cordon.Tokens.Remove", {"serial": serial}), ("io.cordon.Tokens.Reset", {})]]
            out["stillThere"] = [t["serial"] for t in call(reader, "io.cordon.Tokens.List", {})["parameters"]["tokens"]]
            call(s, "io.cordon.Agent.Lock", {})
            out["lockedReader"] = error(call(reader, "io.cordon.Tokens.Code", {"serial": serial}))
            out["lockedCLI"] = error(call(s, "io.cordon.Tokens.Code", {"serial": serial, "passcode": passcode}))
            records = call(s, "io.cordon.Audit.Query", {"limit": 1000})["parameters"]["records"]
            out["audit"] = [r for r in records if r.get("category") == "tokens"]
            out["serial"] = serial
            print(json.dumps(out))
            """, [daemon.socketPath, Self.otpauth("totp"), Self.passcode], in: daemon.root)
        #expect(answer["import"] is NSNull, "\(answer)")
        #expect(answer["again"] as? String == "io.cordon.Tokens.DuplicateToken")
        #expect(answer["unregistered"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["unregisteredList"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["wrongPasscode"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(answer["unmanaged"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["notReader"] as? String == "io.cordon.Tokens.NotCodeReader")
        #expect(answer["reader"] is NSNull, "\(answer)")
        #expect((answer["code"] as? String)?.count == 6)
        #expect(answer["readerManagement"] as? String == "io.cordon.Agent.WrongPasscode")
        // Management needs the passcode, whoever calls: even a code reader changes nothing without it.
        #expect(answer["noPasscode"] as? [String] == Array(repeating: "org.varlink.service.InvalidParameter", count: 4))
        #expect((answer["stillThere"] as? [String])?.count == 1)
        #expect(answer["lockedReader"] as? String == "io.cordon.Tokens.Locked")
        #expect(answer["lockedCLI"] as? String == "io.cordon.Tokens.Locked")
        // Every code read and refusal is audited with the serial, never the code or the seed.
        let audit = try #require(answer["audit"] as? [[String: Any]])
        let serial = try #require(answer["serial"] as? String)
        let reads = audit.filter { $0["action"] as? String == "tokens.code" }
        #expect(
            reads.contains { $0["appId"] as? String == "com.example.reader" && $0["outcome"] as? String == "allow" })
        #expect(
            reads.contains { $0["appId"] as? String == "com.example.other" && $0["outcome"] as? String == "refused" })
        #expect(reads.contains { ($0["reason"] as? String)?.contains(serial) == true })
        let text = String(decoding: try JSONSerialization.data(withJSONObject: audit), as: UTF8.self)
        #expect(!text.contains(answer["code"] as? String ?? "-"))
        #expect(!text.contains(Self.seedBase32) && !text.contains(Self.seed))
        try await daemon.stop()
    }

    @Test func noSeedOnDiskAndAKilledDaemonNeverReusesAnHOTPCounter() async throws {
        let daemon = try await Self.daemon(dataAccess: "afterFirstUnlock")
        // Killed by the attacker; never left running if the script fails first.
        defer { if daemon.process.isRunning { kill(daemon.pid, SIGKILL) } }
        let answer = try await AttackScript.run(
            """
            sock, uri, passcode, path, seed, seed32, pid = sys.argv[1:8]
            s = connect(sock)
            imp = call(s, "io.cordon.Tokens.Import", {"data": uri, "passcode": passcode})
            serial = imp["parameters"]["tokens"][0]["serial"]
            found = {}
            for f in [path, path + "-wal"]:
                data = open(f, "rb").read() if os.path.exists(f) else b""
                found[f[-4:]] = [m for m in (seed, seed32) if m.encode() in data]
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            code = call(s, "io.cordon.Tokens.Code", {"serial": serial})
            # Killed the moment the code is out: the counter must already be stored past it.
            os.kill(int(pid), 9)
            print(json.dumps({"import": error(imp), "found": found, "code": code["parameters"]["code"],
                              "serial": serial}))
            """,
            [
                daemon.socketPath, Self.otpauth("hotp", counter: 5), Self.passcode, daemon.databasePath, Self.seed,
                Self.seedBase32, String(daemon.pid),
            ], in: daemon.root)
        #expect(answer["import"] is NSNull, "\(answer)")
        let found = try #require(answer["found"] as? [String: Any])
        #expect(found["lite"] as? [String] == [], "the database holds the seed: \(found)")
        #expect(found["-wal"] as? [String] == [], "the WAL holds the seed: \(found)")
        try await eventually("cordond is dead") { !daemon.process.isRunning }
        let restarted = try await DaemonProcess.started(root: daemon.root)
        defer { restarted.cleanUp() }
        let client = try await restarted.client()
        try await client.unlock(passcode: Self.passcode)
        await client.close()
        let serial = try #require(answer["serial"] as? String)
        let after = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            reply = call(s, "io.cordon.Tokens.Code", {"serial": sys.argv[2]})
            records = call(s, "io.cordon.Audit.Query", {"limit": 1000})["parameters"]["records"]
            reads = [r for r in records if r.get("action") == "tokens.code" and r.get("outcome") == "allow"]
            print(json.dumps({"error": error(reply), "code": reply.get("parameters", {}).get("code"),
                              "reads": [r["reason"] for r in reads]}))
            """, [restarted.socketPath, serial], in: restarted.root)
        let hex = Self.seed.utf8.map { String(format: "%02x", $0) }.joined()
        let first = try await Self.oathtool(hex, counter: 5)
        let second = try await Self.oathtool(hex, counter: 6)
        #expect(answer["code"] as? String == first)
        #expect(after["code"] as? String == second, "\(after)")
        #expect(first != second)
        // The read before the kill is in the audit log: killing the agent does not erase it
        // (a code read's record is committed to the WAL before the code is sent, without a sync).
        #expect(after["reads"] as? [String] == ["serial \(serial)", "serial \(serial)"], "\(after)")
        try await restarted.stop()
    }

    static func oathtool(_ hex: String, counter: Int) async throws -> String {
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/oathtool"), ["--hotp", "--counter=\(counter)", hex])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
