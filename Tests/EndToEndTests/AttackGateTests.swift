import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Calls that need the passcode or a verified app", "The pasteboard" and
/// "Admin policy": a same-user program tries to wipe, unlock, keep the container awake, read the
/// pasteboard and loosen the admin's policy. Each attack shows the error it now gets; the agent
/// and the attacker are one ordinary user (``UserAgent``), but for the pasteboard test, whose
/// real app is an SDK app in the test process (root) against a root agent in test mode.
@Suite struct AttackGateTests {
    @Test func destructiveAndLockBypassingCallsNeedThePasscodeOrAVerifiedApp() async throws {
        let agent = try await AttackIdentityTests.agent()
        defer { agent.cleanUp() }
        let locked = try await agent.cli(["lock"])
        try #require(locked.status == 0, "lock: \(locked.stderr)")
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            out = {}
            out["wipe"] = error(call(s, "io.cordon.Agent.Wipe", {"confirm": True}))
            out["graceUnlock"] = error(call(s, "io.cordon.Agent.Unlock", {}))
            out["activity"] = error(call(s, "io.cordon.App.ReportActivity"))
            out["requestUnlock"] = error(call(s, "io.cordon.App.RequestUnlock",
                                              {"appId": "IT Security: your session expired, re-enter passcode"}))
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            out["managed"] = reg["parameters"]["managed"]
            out["unmanagedActivity"] = error(call(s, "io.cordon.App.ReportActivity"))
            out["unmanagedUnlock"] = error(call(s, "io.cordon.Agent.Unlock", {}))
            out["wrongWipe"] = error(call(s, "io.cordon.Agent.Wipe", {"confirm": True, "passcode": "0000"}))
            print(json.dumps(out))
            """)
        #expect(answer["wipe"] as? String == "io.cordon.Agent.PasscodeRequired")
        #expect(answer["graceUnlock"] as? String == "io.cordon.Agent.PasscodeRequired")
        #expect(answer["activity"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["requestUnlock"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["unmanagedActivity"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["unmanagedUnlock"] as? String == "io.cordon.Agent.PasscodeRequired")
        #expect(answer["wrongWipe"] as? String == "io.cordon.Agent.WrongPasscode")
        let status = try await agent.cli(["status", "--json"])
        let fields = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(fields?["state"] as? String == "lockedKeyHeld", "still locked, and not wiped: \(status.stdout)")
        #expect(fields?["failedAttempts"] as? Int == 1, "the wrong passcode counted: \(status.stdout)")
    }

    @Test func thePasteboardIsForVerifiedManagedAppsAndNeverWhileLocked() async throws {
        // The bound app: a copy of Python root installed, run as the user, hardened as CordonKit
        // hardens an app.
        let agent = try await UserAgent(
            policy: """
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.notes", "executables": ["$SYSTEM/bin/tool"]}]},
                 "pasteboard": {"copyOut": "blocked"}}
                """, install: ["bin/tool": UserAgent.python])
        defer { agent.cleanUp() }
        let marks = agent.home.appending("marks")
        async let notes = agent.attack(
            """
            import time
            marks = sys.argv[2]
            def mark(name):
                open(os.path.join(marks, name), "w").close()
            def wait_for(name):
                while not os.path.exists(os.path.join(marks, name)):
                    time.sleep(0.02)
            os.makedirs(marks, exist_ok=True)
            s = connect(sys.argv[1])
            reg = call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
            harden()
            out = {"managed": reg.get("parameters", {}).get("managed"),
                   "copy": error(call(s, "io.cordon.Pasteboard.Copy", {"content": "quarterly numbers"}))}
            mark("copied")
            wait_for("locked")
            out["lockedPaste"] = error(call(s, "io.cordon.Pasteboard.Paste"))
            mark("pasted")
            wait_for("unlocked")
            pasted = call(s, "io.cordon.Pasteboard.Paste")
            out["paste"] = error(pasted) or pasted["parameters"]["content"]
            print(json.dumps(out))
            """, [marks], command: UserAgent.asUser + [agent.system.appending("bin/tool")])
        try await eventually("the app copied") { FileManager.default.fileExists(atPath: marks + "/copied") }
        #expect(try await agent.cli(["lock"]).status == 0)
        let answer = try await agent.attack(
            """
            out = {}
            plain = connect(sys.argv[1])
            out["unregistered"] = error(call(plain, "io.cordon.Pasteboard.Paste"))
            same = connect(sys.argv[1])
            out["sameId"] = error(call(same, "io.cordon.App.Register", {"appId": "com.example.notes"}))
            other = connect(sys.argv[1])
            call(other, "io.cordon.App.Register", {"appId": "com.example.python"})
            harden()
            out["sameIdPaste"] = error(call(same, "io.cordon.Pasteboard.Paste"))
            out["unmanaged"] = error(call(other, "io.cordon.Pasteboard.Paste"))
            print(json.dumps(out))
            """)
        // Python is not the bound executable: under the same id it registers unmanaged
        // (executableMismatch: warn) and, like any unmanaged or unregistered client, never pastes.
        #expect(answer["unregistered"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["unmanaged"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["sameId"] is NSNull, "registered, but unmanaged: \(answer)")
        #expect(answer["sameIdPaste"] as? String == "io.cordon.App.NotManaged")
        // The real app itself waits for the unlock.
        _ = FileManager.default.createFile(atPath: marks + "/locked", contents: nil)
        try await eventually("the app tried to paste") { FileManager.default.fileExists(atPath: marks + "/pasted") }
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        _ = FileManager.default.createFile(atPath: marks + "/unlocked", contents: nil)
        let app = try await notes
        #expect(app["managed"] as? Bool == true, "\(app)")
        #expect(app["copy"] is NSNull, "\(app)")
        #expect(app["lockedPaste"] as? String == "io.cordon.Agent.Locked", "\(app)")
        #expect(app["paste"] as? String == "quarterly numbers", "\(app)")
    }

    @Test func aUserFileCannotLoosenTheDefaultWithoutAnAdminFile() async throws {
        let agent = try await AttackIdentityTests.agent()
        defer { agent.cleanUp() }
        let loose = agent.home.appending("loose.json")
        try #"""
        {"schema": "cordon.policy.v1",
         "lock": {"idleTimeoutSeconds": 0, "reauthGraceSeconds": 86400, "onScreenLock": false, "onSuspend": false},
         "passcode": {"maxAttempts": 100, "onMaxAttempts": "lockout"}}
        """#.write(toFile: loose, atomically: true, encoding: .utf8)
        let pushed = try await agent.cli(["policy", "push", loose])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let answer = try await agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Policy.GetEffective")
            print(json.dumps({s["path"]: s.get("json") for s in reply["parameters"]["settings"]}))
            """)
        #expect(answer["/lock/reauthGraceSeconds"] as? String == "60")
        #expect(answer["/lock/onScreenLock"] as? String == "true")
        #expect(answer["/lock/onSuspend"] as? String == "true")
        #expect(answer["/passcode/maxAttempts"] as? String == "10")
        #expect(answer["/passcode/onMaxAttempts"] as? String == "\"wipe\"")
        let status = try await agent.cli(["status", "--json"])
        let fields = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(fields?["maxAttempts"] as? Int == 10, "\(status.stdout)")
    }
}
