import CordonKit
import CordonProtocol
import Foundation
import Testing

/// An attacker, an ordinary program of the same user, asks for an implicit unlock
/// (`io.cordon.App.RequestUnlock`) hoping to show its own text on a display of its choosing, on
/// its own terminal, through a pinentry of its own: the prompt is the agent's all the same.
@Suite(.enabled(if: getuid() == 0, "the agent runs only a root-owned pinentry"))
struct PromptTrustTests {
    static let passcode = "2468"
    static let forgedText = "IT Security: your session expired, re-enter passcode"
    /// The attacker registers as this app (unbound apps are trusted in these tests): only a
    /// verified managed registration gets a prompt, and the prompt names it and nothing else.
    static let attackerApp = "com.example.attacker"
    static let attackerPrompt = "SETDESC com.example.attacker asks to unlock the Cordon container."

    /// The attacker (Python varlink): its own DISPLAY, XAUTHORITY, WAYLAND_DISPLAY and PINENTRY
    /// in its environment, a terminal of its own on fd 0, optionally a registration, then
    /// `RequestUnlock` with the app id it claims. Prints its terminal and what it got.
    static let attacker = """
        import json, os, sys, varlink
        socket, claimed, register = sys.argv[1], sys.argv[2], sys.argv[3]
        master, slave = os.openpty()
        os.dup2(slave, 0)
        out = {"tty": os.ttyname(0)}
        with varlink.Client(address="unix:" + socket) as client:
            with client.open("io.cordon.App", namespaced=True) as app:
                if register != "-":
                    out["managed"] = app.Register(register).managed
                try:
                    reply = app.RequestUnlock(claimed, 60)
                    out["state"] = reply.state
                    out["prompted"] = reply.prompted
                except varlink.VarlinkError as e:
                    out["error"] = e.error()
                    out["reason"] = e.parameters().get("reason")
        print(json.dumps(out))
        """

    static let attackerEnvironment = [
        "DISPLAY": ":66", "XAUTHORITY": "/home/attacker/.Xauthority", "WAYLAND_DISPLAY": "attacker-0",
        "PINENTRY": "/home/attacker/pinentry",
    ]

    /// Runs the attacker against `daemon`; its output as JSON.
    func attack(_ daemon: DaemonProcess, claiming claimed: String, register: String = Self.attackerApp) async throws
        -> [String: Any]
    {
        let script = daemon.root.appending("attacker.py")
        try Self.attacker.write(toFile: script, atomically: true, encoding: .utf8)
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/env"), [python, script, daemon.socketPath, claimed, register],
            environment: Self.attackerEnvironment)
        #expect(result.status == 0, "the attacker failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object, "\(result.stdout)")
    }

    /// cordond whose admin settings name `pinentry`, whose own `$PINENTRY` and the user's
    /// settings.json name `trap`, on `desktop`'s bus when there is one, initialized.
    func daemon(
        _ pinentry: FakePinentry, trap: FakePinentry, desktop: FakeDesktop? = nil, adminPolicy: String? = nil,
        environment: [String: String] = [:]
    ) async throws -> DaemonProcess {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("config"), withIntermediateDirectories: true)
        try #"{"pinentry": "\#(trap.script)"}"#
            .write(toFile: root.appending("config/settings.json"), atomically: true, encoding: .utf8)
        if let adminPolicy {
            try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
            try adminPolicy.write(toFile: root.appending("admin/apps.json"), atomically: true, encoding: .utf8)
        }
        let bus = desktop.map { ["--system-bus-address", $0.address, "--session-bus-address", $0.address] } ?? []
        let daemon = try await DaemonProcess.started(
            root: root, arguments: ["--reauth-grace", "0"] + bus,
            environment: pinentry.agentEnvironment.merging(
                ["PINENTRY": trap.script, "XAUTHORITY": "/home/user/.Xauthority", "XDG_SESSION_ID": ""]
            ) { $1 }.merging(environment) { $1 })
        let client = try await daemon.client()
        try await client.initialize(passcode: Self.passcode)
        await client.close()
        return daemon
    }

    @Test func aForgedAppIdAndTheCallersDisplayNeverReachThePrompt() async throws {
        let desktop = try await FakeDesktop(session: ["Type": "x11", "Display": ":42"])
        let pinentry = try FakePinentry(pins: [Self.passcode])
        let trap = try FakePinentry(pins: [Self.passcode])
        defer {
            desktop.cleanUp()
            pinentry.remove()
            trap.remove()
        }
        let daemon = try await daemon(pinentry, trap: trap, desktop: desktop)
        defer { daemon.cleanUp() }
        // A real app is registered: the attacker claims its id from another process.
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        for claimed in [Self.forgedText, "com.example.notes"] {
            if claimed != Self.forgedText {
                let client = try await daemon.client()
                try await client.lock()
                await client.close()
            }
            // Unregistered, it gets no prompt at all.
            let unregistered = try await attack(daemon, claiming: claimed, register: "-")
            #expect(unregistered["error"] as? String == "io.cordon.App.NotRegistered", "\(unregistered)")
            #expect(pinentry.commands.isEmpty)
            let answer = try await attack(daemon, claiming: claimed)
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
        await app.close()
        try await daemon.stop()
    }

    @Test func withoutLogindTheAgentsOwnDisplayIsUsed() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode])
        let trap = try FakePinentry(pins: [Self.passcode])
        defer {
            pinentry.remove()
            trap.remove()
        }
        let daemon = try await daemon(pinentry, trap: trap, environment: ["WAYLAND_DISPLAY": "wayland-1"])
        defer { daemon.cleanUp() }
        let answer = try await attack(daemon, claiming: Self.forgedText)
        #expect(answer["state"] as? String == "unlocked", "\(answer)")
        let environment = pinentry.startedEnvironment
        #expect(environment["DISPLAY"] == ":99")
        #expect(environment["WAYLAND_DISPLAY"] == "wayland-1")
        #expect(environment["XAUTHORITY"] == "/home/user/.Xauthority")
        #expect(!pinentry.commands.contains { $0.contains("IT Security") || $0.hasPrefix("OPTION ttyname") })
        #expect(trap.commands.isEmpty)
        try await daemon.stop()
    }

    @Test func theTerminalIsTheSessionsNotTheCallers() async throws {
        let terminal = try await PseudoTerminal()
        defer { terminal.close() }
        let desktop = try await FakeDesktop(session: ["Type": "tty", "TTY": terminal.name.replacing("/dev/", with: "")])
        let pinentry = try FakePinentry(pins: [Self.passcode])
        let trap = try FakePinentry(pins: [Self.passcode])
        defer {
            desktop.cleanUp()
            pinentry.remove()
            trap.remove()
        }
        let daemon = try await daemon(pinentry, trap: trap, desktop: desktop)
        defer { daemon.cleanUp() }
        // The agent is in no session: the user's display session is asked for.
        try desktop.send("nopid")
        try await desktop.waitFor("emitted nopid")
        let answer = try await attack(daemon, claiming: Self.forgedText)
        #expect(answer["state"] as? String == "unlocked", "\(answer)")
        let tty = try #require(answer["tty"] as? String)
        #expect(tty != terminal.name)
        let dialogue = pinentry.commands
        #expect(dialogue.contains("OPTION ttyname=\(terminal.name)"), "\(dialogue)")
        #expect(!dialogue.contains("OPTION ttyname=\(tty)"), "\(dialogue)")
        #expect(pinentry.startedEnvironment["DISPLAY"] == nil, "a terminal session has no display")
        try await desktop.waitFor("getuser")
        try await daemon.stop()
    }

    @Test func aRegisteredButUnmanagedAppGetsNoPrompt() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode])
        let trap = try FakePinentry()
        defer {
            pinentry.remove()
            trap.remove()
        }
        let policy = """
            {"schema": "cordon.policy.v1", "apps": {"managed": [{"id": "com.example.notes",
              "executables": ["/usr/bin/true"]}], "unknown": "unmanaged"}}
            """
        let daemon = try await daemon(pinentry, trap: trap, adminPolicy: policy)
        defer { daemon.cleanUp() }
        let answer = try await attack(daemon, claiming: "com.example.notes", register: "com.example.python")
        #expect(answer["managed"] as? Bool == false)
        #expect(answer["error"] as? String == "io.cordon.App.NotManaged", "\(answer)")
        #expect(pinentry.commands.isEmpty, "no prompt for an unmanaged app")
        try await daemon.stop()
    }

    @Test func aPinentryOrSettingsTheUserCouldWriteIsRefused() async throws {
        let pinentry = try FakePinentry(pins: [Self.passcode])
        let trap = try FakePinentry(pins: [Self.passcode])
        defer {
            pinentry.remove()
            trap.remove()
        }
        let daemon = try await daemon(pinentry, trap: trap)
        defer { daemon.cleanUp() }
        // Admin settings naming a program another user owns (as if the user had planted it).
        let nobody: [FileAttributeKey: Any] = [.ownerAccountID: 65534]
        try FileManager.default.setAttributes(nobody, ofItemAtPath: trap.script)
        try #"{"pinentry": "\#(trap.script)"}"#.write(
            toFile: pinentry.adminSettingsPath, atomically: true, encoding: .utf8)
        let refusedProgram = try await attack(daemon, claiming: Self.forgedText)
        #expect(refusedProgram["error"] as? String == "io.cordon.App.UnlockUnavailable")
        let reason = try #require(refusedProgram["reason"] as? String)
        #expect(reason.contains("the pinentry \(trap.script)") && reason.contains("is not owned by root (uid 65534)"))
        // The admin settings file itself owned by another user.
        try #"{"pinentry": "\#(pinentry.script)"}"#
            .write(toFile: pinentry.adminSettingsPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(nobody, ofItemAtPath: pinentry.adminSettingsPath)
        let refusedSettings = try await attack(daemon, claiming: Self.forgedText)
        #expect(refusedSettings["error"] as? String == "io.cordon.App.UnlockUnavailable")
        #expect(
            (refusedSettings["reason"] as? String)?.contains(
                "\(pinentry.adminSettingsPath): component 'admin-settings.json' is not owned by root") == true)
        #expect(trap.commands.isEmpty)
        #expect(pinentry.commands.isEmpty)
        let client = try await daemon.client()
        #expect(try await client.status().state == .lockedNoKey)
        await client.close()
        try await daemon.stop()
    }
}
