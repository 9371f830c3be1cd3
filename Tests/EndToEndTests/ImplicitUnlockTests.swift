import Foundation
import Testing

/// `RequestUnlock`: an app asks, the agent unlocks within the grace or prompts through pinentry
/// (the fake one, named in admin settings the agent trusts only when root owns them). cordond,
/// its prompt, the CLI and the app (a Python varlink program, ``UserApps``) run as an ordinary
/// user outside test mode (``UserAgent``); root installs the admin settings and the pinentry.
@Suite(.enabled(if: getuid() == 0, "root installs the pinentry the agent runs; everything else runs as the user"))
struct ImplicitUnlockTests {
    static let passcode = UserAgent.passcode

    /// Unbound apps trusted (the app gets a managed registration), and the grace after a lock.
    static func policy(grace: Int) -> String {
        #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}, "lock": {"reauthGraceSeconds": \#(grace)}}"#
    }

    /// cordond as the user with admin settings naming `pinentry` (none: no pinentry, no display),
    /// initialized (locked), and the app `com.example.notes` registered.
    static func start(_ pinentry: FakePinentry?, grace: Int = 0, promptProgram: String? = nil) async throws
        -> (UserAgent, UserApps)
    {
        let settings = pinentry.map { ["--admin-settings", $0.adminSettingsPath] } ?? []
        let environment =
            pinentry.map { _ in ["PINENTRY": "", "DISPLAY": ":99", "CORDON_PINENTRY_TIMEOUT": "120"] } ?? [
                "PINENTRY": "", "DISPLAY": "", "WAYLAND_DISPLAY": "",
            ]
        let agent = try await UserAgent(
            policy: policy(grace: grace), initialize: false,
            arguments: settings + (promptProgram.map { ["--prompt-program", $0] } ?? []), environment: environment)
        do {
            try await agent.cliSucceeds(["init", "--passcode-stdin"], input: passcode + "\n")
            let apps = try agent.startApps()
            try await apps.register("notes", appId: "com.example.notes")
            return (agent, apps)
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    /// CordonKit's `requestUnlock`: `RequestUnlock` on a connection of its own, with the app's token.
    static func requestUnlock(_ apps: UserApps, timeoutSeconds: Int = 120) async throws -> [String: Any] {
        try await apps.send([
            "op": "own", "name": "notes", "method": "io.cordon.App.RequestUnlock",
            "parameters": ["appId": "com.example.notes", "timeoutSeconds": timeoutSeconds],
        ])
    }

    static func state(_ agent: UserAgent) async throws -> String? { try await agent.status()["state"] as? String }

    @Test func withinTheGraceNoPromptIsShown() async throws {
        let pinentry = try FakePinentry(pins: [], user: true)
        defer { pinentry.remove() }
        let (agent, apps) = try await Self.start(pinentry, grace: 600)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        try await agent.unlock()
        try await agent.cliSucceeds(["lock"])
        let reply = try await Self.requestUnlock(apps)
        #expect(varlinkError(reply) == nil, "\(reply)")
        #expect(varlinkParameters(reply)["prompted"] as? Bool == false, "\(reply)")
        #expect(try await Self.state(agent) == "unlocked")
        #expect(pinentry.commands.isEmpty)
        #expect(agent.terminate() == 0)
    }

    @Test func outsideTheGraceTheUserIsPrompted() async throws {
        let pinentry = try FakePinentry(pins: ["1111", Self.passcode], user: true)
        defer { pinentry.remove() }
        let (agent, apps) = try await Self.start(pinentry)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        let reply = try await Self.requestUnlock(apps)
        #expect(varlinkParameters(reply)["prompted"] as? Bool == true, "\(reply)")
        #expect(try await Self.state(agent) == "unlocked")
        let dialogue = pinentry.commands
        // The app asks on a connection of its own: the registration of its process names it.
        #expect(dialogue.contains { $0.hasPrefix("SETDESC com.example.notes asks to unlock the Cordon container.") })
        #expect(dialogue.contains { $0.hasPrefix("SETERROR Wrong passcode") }, "\(dialogue)")
        let key = try await apps.call("notes", "io.cordon.App.GetKey")
        #expect(varlinkError(key) == nil, "\(key)")
        #expect(agent.terminate() == 0)
    }

    @Test func cancellingThePromptFailsTheRequest() async throws {
        let pinentry = try FakePinentry(pins: ["CANCEL"], user: true)
        defer { pinentry.remove() }
        let (agent, apps) = try await Self.start(pinentry)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        let reply = try await Self.requestUnlock(apps)
        #expect(varlinkError(reply) == "io.cordon.App.UnlockCancelled", "\(reply)")
        #expect(try await Self.state(agent) == "lockedNoKey")
        #expect(agent.terminate() == 0)
    }

    @Test func anUnlockFromElsewhereAnswersTheWaitingApp() async throws {
        let pinentry = try FakePinentry(pins: ["HANG"], user: true)
        defer { pinentry.remove() }
        let (agent, apps) = try await Self.start(pinentry)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        try await apps.send([
            "op": "start", "id": "waiting", "name": "notes", "method": "io.cordon.App.RequestUnlock",
            "parameters": ["appId": "com.example.notes", "timeoutSeconds": 300],
        ])
        try await eventually("the prompt is up") { pinentry.commands.contains("GETPIN") }
        try await agent.unlock()
        var reply: [String: Any] = [:]
        try await eventually("the waiting app is answered") {
            let result = try await apps.send(["op": "result", "name": "notes", "id": "waiting"])
            reply = result["reply"] as? [String: Any] ?? [:]
            return result["done"] as? Bool == true
        }
        #expect(varlinkError(reply) == nil, "\(reply)")
        #expect(varlinkParameters(reply)["prompted"] as? Bool == true, "\(reply)")
        #expect(agent.terminate() == 0)
    }

    /// The prompt program the agent runs gets none of the agent's sockets (its listening
    /// socket, the requesting app's connection): it lists its descriptors, then cancels. The
    /// program is root's (an admin input); it writes where the user may (the pinentry's records).
    @Test func thePromptProgramGetsNoSocketOfTheAgent() async throws {
        let pinentry = try FakePinentry(pins: [], user: true)
        defer { pinentry.remove() }
        let prompt = pinentry.directory.appending("prompt")
        let listing = pinentry.records + "/prompt-descriptors"
        try "#!/bin/sh\nls -l /proc/$$/fd > \(listing) 2>&1\nexit 8\n".write(
            toFile: prompt, atomically: true, encoding: .utf8)
        chmod(prompt, 0o755)
        let (agent, apps) = try await Self.start(pinentry, promptProgram: prompt)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        let reply = try await Self.requestUnlock(apps)
        #expect(varlinkError(reply) == "io.cordon.App.UnlockCancelled", "\(reply)")
        let inherited = Set(Self.socketInodes(in: (try? String(contentsOfFile: listing, encoding: .utf8)) ?? ""))
        let pid = agent.daemonPID
        let agents = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let agentSockets = Set(
            Self.socketInodes(
                in: agents.compactMap {
                    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")
                }.joined(separator: "\n")))
        #expect(agentSockets.count >= 2, "the listening socket and the app's connection")
        #expect(FileManager.default.fileExists(atPath: listing), "the prompt ran")
        #expect(inherited.isDisjoint(with: agentSockets), "the prompt holds the agent's sockets \(inherited)")
        #expect(agent.terminate() == 0)
    }

    /// The inode numbers of `socket:[N]` in `text`.
    static func socketInodes(in text: String) -> [String] {
        text.components(separatedBy: "socket:[").dropFirst().compactMap {
            $0.split(separator: "]").first.map(String.init)
        }
    }

    /// No admin settings name a pinentry (the default, /etc/cordon/settings.json, names none
    /// where it is missing) and the agent has no display.
    @Test func withoutPinentryTheAppIsToldAtOnce() async throws {
        let (agent, apps) = try await Self.start(nil)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        let reply = try await Self.requestUnlock(apps)
        #expect(varlinkError(reply) == "io.cordon.App.UnlockUnavailable", "unlocked without a prompt: \(reply)")
        let reason = varlinkParameters(reply)["reason"] as? String ?? ""
        #expect(reason.contains("no display or terminal to ask on"), "\(reason)")
        #expect(agent.terminate() == 0)
    }
}
