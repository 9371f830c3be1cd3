import Foundation
import Testing

/// An attacker, an ordinary program of the same user, asks for an implicit unlock
/// (`io.cordon.App.RequestUnlock`) hoping to show its own text on a display of its choosing, on
/// its own terminal, through a pinentry of its own: the prompt is the agent's all the same. The
/// agent, its prompt, the apps and the attacker are one ordinary user (``UserAgent``); root
/// installs the admin settings and the pinentry they name.
@Suite(.enabled(if: getuid() == 0, "root installs the pinentry the agent runs; everything else runs as the user"))
struct PromptTrustTests {
    static let passcode = UserAgent.passcode
    static let forgedText = "IT Security: your session expired, re-enter passcode"
    /// The attacker registers as this app (unbound apps are trusted in these tests): only a
    /// verified managed registration gets a prompt, and the prompt names it and nothing else.
    static let attackerApp = "com.example.attacker"
    static let attackerPrompt = "SETDESC com.example.attacker asks to unlock the Cordon container."
    /// Unbound apps trusted, and no grace after a lock: every unlock after a lock prompts.
    static let trusted = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "lock": {"reauthGraceSeconds": 0}}
        """#

    /// The attacker (Python varlink, run as the user): its own DISPLAY, XAUTHORITY,
    /// WAYLAND_DISPLAY and PINENTRY in its environment, a terminal of its own on fd 0, optionally
    /// a registration, then `RequestUnlock` with the app id it claims. Prints its terminal and
    /// what it got.
    static let attacker = """
        claimed, register = sys.argv[2], sys.argv[3]
        master, slave = os.openpty()
        os.dup2(slave, 0)
        out = {"tty": os.ttyname(0)}
        s = connect(sys.argv[1])
        if register != "-":
            out["managed"] = call(s, "io.cordon.App.Register", {"appId": register})["parameters"]["managed"]
        reply = call(s, "io.cordon.App.RequestUnlock", {"appId": claimed, "timeoutSeconds": 60})
        if error(reply):
            out["error"] = error(reply)
            out["reason"] = reply.get("parameters", {}).get("reason")
        else:
            out["state"] = reply["parameters"]["state"]
            out["prompted"] = reply["parameters"]["prompted"]
        print(json.dumps(out))
        """

    static let attackerEnvironment = [
        "DISPLAY": ":66", "XAUTHORITY": "/home/attacker/.Xauthority", "WAYLAND_DISPLAY": "attacker-0",
        "PINENTRY": "/home/attacker/pinentry",
    ]

    /// Runs the attacker against `agent`; its output as JSON.
    func attack(_ agent: UserAgent, claiming claimed: String, register: String = Self.attackerApp) async throws
        -> [String: Any]
    {
        try await agent.attack(Self.attacker, [claimed, register], environment: Self.attackerEnvironment)
    }

    /// cordond as the user whose admin settings (`--admin-settings`, root's) name `pinentry`,
    /// whose own `$PINENTRY` and the user's settings.json name `trap`, on `desktop`'s bus when
    /// there is one, initialized (locked). `adminPolicy` replaces ``trusted``.
    func agent(
        _ pinentry: FakePinentry, trap: FakePinentry, desktop: FakeDesktop? = nil, adminPolicy: String? = nil,
        environment: [String: String] = [:]
    ) async throws -> UserAgent {
        let bus = desktop.map { ["--system-bus-address", $0.address, "--session-bus-address", $0.address] } ?? []
        let agent = try await UserAgent(
            policy: adminPolicy ?? Self.trusted, initialize: false,
            arguments: ["--admin-settings", pinentry.adminSettingsPath] + bus,
            // A logind of the test's own is on a private bus, which only test mode takes (outside it
            // the system bus is the system's).
            testMode: desktop != nil,
            environment: [
                "PINENTRY": trap.script, "DISPLAY": ":99", "CORDON_PINENTRY_TIMEOUT": "120",
                "XAUTHORITY": "/home/user/.Xauthority", "XDG_SESSION_ID": "",
            ].merging(environment) { $1 })
        do {
            let config = agent.home.appending("config")
            try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
            try #"{"pinentry": "\#(trap.script)"}"#
                .write(toFile: config + "/settings.json", atomically: true, encoding: .utf8)
            try await agent.give(config)
            let initialized = try await agent.cli(["init", "--passcode-stdin"], input: Self.passcode + "\n")
            try #require(initialized.status == 0, "init: \(initialized.stderr)")
        } catch {
            agent.cleanUp()
            throw error
        }
        return agent
    }

    @Test func aForgedAppIdAndTheCallersDisplayNeverReachThePrompt() async throws {
        let desktop = try await FakeDesktop(session: ["Type": "x11", "Display": ":42"], anyUser: true)
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(pins: [Self.passcode], user: true)
        defer {
            desktop.cleanUp()
            pinentry.remove()
            trap.remove()
        }
        let agent = try await agent(pinentry, trap: trap, desktop: desktop)
        defer { agent.cleanUp() }
        // A real app is registered (the notes example, run as the user): the attacker claims its
        // id from another process.
        _ = try await agent.startNotes()
        for claimed in [Self.forgedText, "com.example.notes"] {
            if claimed != Self.forgedText {
                let locked = try await agent.cli(["lock"])
                try #require(locked.status == 0, "lock: \(locked.stderr)")
            }
            // Unregistered, it gets no prompt at all.
            let unregistered = try await attack(agent, claiming: claimed, register: "-")
            #expect(unregistered["error"] as? String == "io.cordon.App.NotRegistered", "\(unregistered)")
            #expect(pinentry.commands.isEmpty)
            let answer = try await attack(agent, claiming: claimed)
            #expect(answer["state"] as? String == "unlocked", "\(answer)")
            let tty = try #require(answer["tty"] as? String)
            let dialogue = pinentry.commands
            #expect(dialogue.contains { $0.hasPrefix(Self.attackerPrompt) }, "\(dialogue)")
            #expect(
                !dialogue.contains { $0.contains("IT Security") || $0.contains("com.example.notes") }, "\(dialogue)")
            #expect(!dialogue.contains { $0.hasPrefix("OPTION ttyname") }, "not the attacker's \(tty): \(dialogue)")
            try pinentry.setPins([Self.passcode])
        }
        // It ran through the descriptor cordond opened and checked, not by its name.
        #expect(pinentry.startedAs == "/proc/self/fd/3")
        let environment = pinentry.startedEnvironment
        #expect(environment["DISPLAY"] == ":42", "the session's display")
        #expect(environment["XAUTHORITY"] == "/home/user/.Xauthority", "the agent's, not the attacker's")
        #expect(environment["WAYLAND_DISPLAY"] == nil)
        #expect(environment["PINENTRY"] == nil)
        #expect(trap.commands.isEmpty, "the pinentry of $PINENTRY and settings.json never ran")
        try await desktop.waitFor("get Display")
    }

    @Test func withoutLogindTheAgentsOwnDisplayIsUsed() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(pins: [Self.passcode], user: true)
        defer {
            pinentry.remove()
            trap.remove()
        }
        let agent = try await agent(pinentry, trap: trap, environment: ["WAYLAND_DISPLAY": "wayland-1"])
        defer { agent.cleanUp() }
        let answer = try await attack(agent, claiming: Self.forgedText)
        #expect(answer["state"] as? String == "unlocked", "\(answer)")
        let environment = pinentry.startedEnvironment
        #expect(environment["DISPLAY"] == ":99")
        #expect(environment["WAYLAND_DISPLAY"] == "wayland-1")
        #expect(environment["XAUTHORITY"] == "/home/user/.Xauthority")
        #expect(!pinentry.commands.contains { $0.contains("IT Security") || $0.hasPrefix("OPTION ttyname") })
        #expect(trap.commands.isEmpty)
    }

    @Test func theTerminalIsTheSessionsNotTheCallers() async throws {
        // The session's terminal is the user's: the agent places a prompt only on a terminal of its uid.
        let terminal = try await PseudoTerminal(user: true)
        defer { terminal.close() }
        let desktop = try await FakeDesktop(
            session: ["Type": "tty", "TTY": terminal.name.replacing("/dev/", with: "")], anyUser: true)
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(pins: [Self.passcode], user: true)
        defer {
            desktop.cleanUp()
            pinentry.remove()
            trap.remove()
        }
        let agent = try await agent(pinentry, trap: trap, desktop: desktop)
        defer { agent.cleanUp() }
        // The agent is in no session: the user's display session is asked for.
        try desktop.send("nopid")
        try await desktop.waitFor("emitted nopid")
        let answer = try await attack(agent, claiming: Self.forgedText)
        #expect(answer["state"] as? String == "unlocked", "\(answer)")
        let tty = try #require(answer["tty"] as? String)
        #expect(tty != terminal.name)
        let dialogue = pinentry.commands
        #expect(dialogue.contains("OPTION ttyname=\(terminal.name)"), "\(dialogue)")
        #expect(!dialogue.contains("OPTION ttyname=\(tty)"), "\(dialogue)")
        #expect(pinentry.startedEnvironment["DISPLAY"] == nil, "a terminal session has no display")
        try await desktop.waitFor("getuser")
    }

    @Test func aRegisteredButUnmanagedAppGetsNoPrompt() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(user: true)
        defer {
            pinentry.remove()
            trap.remove()
        }
        let policy = """
            {"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "com.example.notes",
              "executables": ["/usr/bin/true"]}], "unknown": "unmanaged"}, "lock": {"reauthGraceSeconds": 0}}
            """
        let agent = try await agent(pinentry, trap: trap, adminPolicy: policy)
        defer { agent.cleanUp() }
        let answer = try await attack(agent, claiming: "com.example.notes", register: "com.example.python")
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["error"] as? String == "io.cordon.App.NotManaged", "\(answer)")
        #expect(pinentry.commands.isEmpty, "no prompt for an unmanaged app")
    }

    @Test func aPinentryOrSettingsTheUserCouldWriteIsRefused() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(pins: [Self.passcode], user: true)
        defer {
            pinentry.remove()
            trap.remove()
        }
        let agent = try await agent(pinentry, trap: trap)
        defer { agent.cleanUp() }
        // Root's admin settings, opened at start, now name a program the user owns (as if the
        // user had planted it): rewritten in place, the inode cordond holds.
        let user: [FileAttributeKey: Any] = [.ownerAccountID: Int(UserAgent.uid) ?? -1]
        try FileManager.default.setAttributes(user, ofItemAtPath: trap.script)
        let settings = try #require(FileHandle(forUpdatingAtPath: pinentry.adminSettingsPath))
        try settings.truncate(atOffset: 0)
        try settings.write(contentsOf: Data(#"{"pinentry": "\#(trap.script)"}"#.utf8))
        try settings.close()
        let refusedProgram = try await attack(agent, claiming: Self.forgedText)
        #expect(refusedProgram["error"] as? String == "io.cordon.App.UnlockUnavailable", "\(refusedProgram)")
        let reason = try #require(refusedProgram["reason"] as? String)
        #expect(
            reason.contains("the pinentry \(trap.script)")
                && reason.contains("is not owned by root (uid \(UserAgent.uid))"), "\(reason)")
        // The admin settings file itself owned by the user: outside test mode admin settings are
        // opened once, at start, so that is where cordond refuses them.
        try #"{"pinentry": "\#(pinentry.script)"}"#
            .write(toFile: pinentry.adminSettingsPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(user, ofItemAtPath: pinentry.adminSettingsPath)
        let refusedSettings = try await agent.startAgain()
        #expect(refusedSettings.status == 2, "\(refusedSettings.stderr)")
        #expect(
            refusedSettings.stderr.contains(
                "\(pinentry.adminSettingsPath): component 'admin-settings.json' is not owned by root"),
            "\(refusedSettings.stderr)")
        #expect(trap.commands.isEmpty)
        #expect(pinentry.commands.isEmpty)
        let status = try await agent.cli(["status", "--json"])
        let fields = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(fields?["state"] as? String == "lockedNoKey", "\(status.stdout)")
    }
}
