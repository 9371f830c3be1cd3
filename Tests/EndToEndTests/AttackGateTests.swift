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
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let daemon = try await AttackIdentityTests.daemon(
            policy: #"""
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.notes", "executables": ["\#(runner)"]}]},
                 "pasteboard": {"copyOut": "blocked"}}
                """#)
        defer { daemon.cleanUp() }
        let notes = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        #expect(notes.managed)
        _ = try await notes.pasteboard.copy("quarterly numbers")
        let client = try await daemon.client()
        try await client.lock()
        let answer = try await AttackScript.run(
            """
            out = {}
            plain = connect(sys.argv[1])
            out["unregistered"] = error(call(plain, "io.cordon.Pasteboard.Paste"))
            same = connect(sys.argv[1])
            out["sameId"] = error(call(same, "io.cordon.App.Register", {"appId": "com.example.notes"}))
            out["sameIdPaste"] = error(call(same, "io.cordon.Pasteboard.Paste"))
            other = connect(sys.argv[1])
            call(other, "io.cordon.App.Register", {"appId": "com.example.python"})
            out["unmanaged"] = error(call(other, "io.cordon.Pasteboard.Paste"))
            print(json.dumps(out))
            """, [daemon.socketPath], in: daemon.root)
        // Python is not the bound executable: under the same id it registers unmanaged
        // (executableMismatch: warn) and, like any unmanaged or unregistered client, never pastes.
        #expect(answer["unregistered"] as? String == "io.cordon.App.NotRegistered")
        #expect(answer["unmanaged"] as? String == "io.cordon.App.NotManaged")
        #expect(answer["sameId"] is NSNull, "registered, but unmanaged: \(answer)")
        #expect(answer["sameIdPaste"] as? String == "io.cordon.App.NotManaged")
        // The real app itself waits for the unlock.
        await #expect(throws: CordonError.locked) { _ = try await notes.pasteboard.paste() }
        try await client.unlock(passcode: "2468")
        #expect(try await notes.pasteboard.paste().content == "quarterly numbers")
        await notes.close()
        await client.close()
        try await daemon.stop()
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
