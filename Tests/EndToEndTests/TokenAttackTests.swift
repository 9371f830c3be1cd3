import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Software tokens": a same-user Python program (raw varlink, `sqlite3`)
/// asks for codes without being a verified managed code reader, while the container is locked,
/// greps the database and its WAL for a seed, and kills cordond right after an HOTP code to make
/// it hand out the same counter again. The agent, the apps and the attacker are one ordinary user
/// (``UserAgent``: outside test mode, the admin policy root's).
@Suite struct TokenAttackTests {
    /// A 20-byte seed that would be easy to spot on disk, and its base32 form.
    static let seed = "cordon-seed-marker-1"
    static let seedBase32 = "MNXXEZDPNYWXGZLFMQWW2YLSNNSXELJR"
    static let passcode = UserAgent.passcode

    /// The agent as an ordinary user, its admin policy trusting unbound app ids
    /// (`com.example.reader` and `com.example.other` register managed), binding
    /// `com.example.notes` to the notes example (so Python under that id is unmanaged), and
    /// listing one code reader.
    static func agent(dataAccess: String) async throws -> UserAgent {
        try await UserAgent(
            policy: #"""
                {"schema": "cordon.policy.v1",
                 "apps": {"unknown": "trusted", "managed": [{"id": "com.example.notes", "executables": ["\#(Binaries.notes.path)"]}]},
                 "tokens": {"codeReaders": ["com.example.reader"], "dataAccess": "\#(dataAccess)"}}
                """#)
    }

    static func otpauth(_ kind: String, counter: Int = 0) -> String {
        "otpauth://\(kind)/Example:alice?secret=\(seedBase32)&issuer=Example"
            + (kind == "hotp" ? "&counter=\(counter)" : "")
    }

    @Test func onlyAVerifiedManagedCodeReaderWhileUnlockedGetsCodes() async throws {
        let agent = try await Self.agent(dataAccess: "whenUnlocked")
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
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
            other = connect(sock)
            call(other, "io.cordon.App.Register", {"appId": "com.example.other"})
            reader = connect(sock)
            call(reader, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            out["unmanaged"] = error(call(notes, "io.cordon.Tokens.Code", {"serial": serial}))
            out["notReader"] = error(call(other, "io.cordon.Tokens.Code", {"serial": serial}))
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
            """, [Self.otpauth("totp"), Self.passcode])
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
    }

    @Test func noSeedOnDiskAndAKilledDaemonNeverReusesAnHOTPCounter() async throws {
        let agent = try await Self.agent(dataAccess: "afterFirstUnlock")
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            sock, uri, passcode, path, seed, seed32, pid, totp = sys.argv[1:9]
            s = connect(sock)
            imp = call(s, "io.cordon.Tokens.Import", {"data": uri, "passcode": passcode})
            serial = imp["parameters"]["tokens"][0]["serial"]
            timp = call(s, "io.cordon.Tokens.Import", {"data": totp, "passcode": passcode})
            tserial = timp["parameters"]["tokens"][0]["serial"]
            found = {}
            for f in [path, path + "-wal"]:
                data = open(f, "rb").read() if os.path.exists(f) else b""
                found[f[-4:]] = [m for m in (seed, seed32) if m.encode() in data]
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            # A TOTP token twice: the second code comes from the record the agent holds, and its
            # audit record is only in the journal when the agent dies.
            tcodes = [error(call(s, "io.cordon.Tokens.Code", {"serial": tserial})) for _ in range(2)]
            code = call(s, "io.cordon.Tokens.Code", {"serial": serial})
            # Killed the moment the code is out: the counter must already be stored past it.
            os.kill(int(pid), 9)
            print(json.dumps({"import": error(imp), "found": found, "code": code["parameters"]["code"],
                              "serial": serial, "tserial": tserial, "tcodes": tcodes}))
            """,
            [
                Self.otpauth("hotp", counter: 5), Self.passcode, agent.home.appending("data/cordon.sqlite"), Self.seed,
                Self.seedBase32, String(agent.process.processIdentifier),
                "otpauth://totp/Example:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example",
            ])
        #expect(answer["import"] is NSNull, "\(answer)")
        #expect((answer["tcodes"] as? [Any])?.allSatisfy { $0 is NSNull } == true, "\(answer)")
        let found = try #require(answer["found"] as? [String: Any])
        #expect(found["lite"] as? [String] == [], "the database holds the seed: \(found)")
        #expect(found["-wal"] as? [String] == [], "the WAL holds the seed: \(found)")
        try await eventually("cordond is dead") { !agent.process.isRunning }
        try await agent.restart()
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: Self.passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
        let serial = try #require(answer["serial"] as? String)
        let after = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            reply = call(s, "io.cordon.Tokens.Code", {"serial": sys.argv[2]})
            records = call(s, "io.cordon.Audit.Query", {"limit": 1000})["parameters"]["records"]
            reads = [r for r in records if r.get("action") == "tokens.code" and r.get("outcome") == "allow"]
            print(json.dumps({"error": error(reply), "code": reply.get("parameters", {}).get("code"),
                              "reads": [r["reason"] for r in reads]}))
            """, [serial])
        let hex = Self.seed.utf8.map { String(format: "%02x", $0) }.joined()
        let first = try await Self.oathtool(hex, counter: 5)
        let second = try await Self.oathtool(hex, counter: 6)
        #expect(answer["code"] as? String == first)
        #expect(after["code"] as? String == second, "\(after)")
        #expect(first != second)
        // The reads before the kill are in the audit log: killing the agent does not erase them
        // (a code read's record is in the audit journal, one write(2), before the code is sent;
        // the restarted agent stores what its group commit had not).
        let tserial = try #require(answer["tserial"] as? String)
        #expect(
            after["reads"] as? [String]
                == ["serial \(tserial)", "serial \(tserial)", "serial \(serial)", "serial \(serial)"], "\(after)")
    }

    /// Issue #32, item 9: a code reader (Python as the user, a verified managed registration)
    /// calling the raw `Code` of an HOTP token gets the current counter's code and nothing of the
    /// next counter's (before, `next` carried it: a valid code to hold for later); each call moves
    /// the counter by one, as oathtool counts. A TOTP reply keeps the next interval's code.
    @Test func anHOTPCodeReaderNeverGetsTheNextCountersCode() async throws {
        let agent = try await Self.agent(dataAccess: "afterFirstUnlock")
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            sock, hotp, totp, passcode = sys.argv[1:5]
            s = connect(sock)
            serials = [call(s, "io.cordon.Tokens.Import", {"data": u, "passcode": passcode})["parameters"]["tokens"][0]["serial"]
                       for u in (hotp, totp)]
            reader = connect(sock)
            call(reader, "io.cordon.App.Register", {"appId": "com.example.reader"})
            harden()
            replies = [call(reader, "io.cordon.Tokens.Code", {"serial": serials[0]}) for _ in range(2)]
            replies.append(call(s, "io.cordon.Tokens.Code", {"serial": serials[0], "passcode": passcode}))
            timed = call(reader, "io.cordon.Tokens.Code", {"serial": serials[1]})
            print(json.dumps({"replies": replies, "totp": timed}))
            """, [Self.otpauth("hotp", counter: 5), Self.otpauth("totp"), Self.passcode])
        let replies = try #require(answer["replies"] as? [[String: Any]], "\(answer)")
        try #require(replies.count == 3)
        let hex = Self.seed.utf8.map { String(format: "%02x", $0) }.joined()
        for (index, reply) in replies.enumerated() {
            #expect(reply["error"] == nil, "\(reply)")
            let parameters = reply["parameters"] as? [String: Any] ?? [:]
            #expect(parameters["code"] as? String == (try await Self.oathtool(hex, counter: 5 + index)))
            #expect(parameters["next"] == nil, "the reply carries the next counter's code: \(reply)")
            #expect(parameters["secondsLeft"] as? Int == 0)
        }
        let totp = (answer["totp"] as? [String: Any])?["parameters"] as? [String: Any]
        #expect(totp?["next"] as? String != nil, "\(answer)")
    }

    static func oathtool(_ hex: String, counter: Int) async throws -> String {
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/oathtool"), ["--hotp", "--counter=\(counter)", hex])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
