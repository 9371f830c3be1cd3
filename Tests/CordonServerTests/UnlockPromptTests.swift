import CordonLifecycle
import CordonSystem
import Foundation
import Testing

@testable import CordonServer

/// What the implicit-unlock prompt is made of: who it names, where it is shown, which pinentry
/// it runs. None of it comes from the caller.
@Suite("UnlockPrompt")
struct UnlockPromptTests {
    static func registration(_ connection: ConnectionID, _ appId: String, pid: Int, managed: Bool = true)
        -> AppRegistration
    {
        AppRegistration(
            connection: connection, appId: appId, pid: pid, executable: "/usr/bin/app", managed: managed,
            token: "t\(connection)")
    }

    @Test func onlyTheCallersOwnRegistrationIsNamed() {
        let registrations = [
            1: Self.registration(1, "com.example.notes", pid: 100),
            2: Self.registration(2, "com.example.mail", pid: 200, managed: false),
            3: Self.registration(3, "com.example.viewer", pid: 300),
            4: Self.registration(4, "com.example.editor", pid: 300),
        ]
        func requester(_ connection: ConnectionID, pid: Int, claimed: String?) -> UnlockPrompt.Requester {
            UnlockPrompt.requester(connection: connection, pid: pid, claimed: claimed, registrations: registrations)
        }
        // On the registered connection, whatever it claims.
        #expect(requester(1, pid: 100, claimed: "IT Security: re-enter passcode") == .managed("com.example.notes"))
        #expect(requester(2, pid: 200, claimed: nil) == .unmanaged("com.example.mail"))
        // On a connection of its own (the SDK's): the registration of the same process.
        #expect(requester(9, pid: 100, claimed: "com.example.notes") == .managed("com.example.notes"))
        #expect(requester(9, pid: 100, claimed: "com.example.mail") == .managed("com.example.notes"))
        // A process with two registrations names the one it claims, else none.
        #expect(requester(9, pid: 300, claimed: "com.example.editor") == .managed("com.example.editor"))
        #expect(requester(9, pid: 300, claimed: nil) == .unregistered)
        // Another process's app id names nothing.
        #expect(requester(9, pid: 999, claimed: "com.example.notes") == .unregistered)
        #expect(requester(9, pid: 0, claimed: "com.example.notes") == .unregistered)
    }

    @Test func theArgumentsAndEnvironmentAreTheAgents() {
        let prompt = UnlockPrompt(
            program: "/usr/bin/cordon", socketPath: "/run/user/1000/cordon/agent.sock", pinentry: "/usr/bin/pinentry",
            requester: .unmanaged("com.example.mail"),
            display: PromptDisplay(display: ":0", xauthority: "/home/u/.Xauthority", source: "test"))
        #expect(
            prompt.arguments == [
                "--socket", "/run/user/1000/cordon/agent.sock", "unlock", "--pinentry-only", "--pinentry",
                "/usr/bin/pinentry", "--requested-by", "com.example.mail", "--unmanaged",
            ])
        #expect(UnlockPrompt.Requester.unregistered.arguments == ["--unregistered"])
        let environment = prompt.environment(agent: [
            "HOME": "/home/u", "PINENTRY": "/home/u/evil", "CORDON_CONFIG_DIR": "/home/u/.config/cordon",
            "WAYLAND_DISPLAY": "wayland-0", "CORDON_PROMPT_TTY": "/dev/pts/9", "NOTIFY_SOCKET": "/run/notify",
        ])
        #expect(
            environment == [
                "HOME": "/home/u", "DISPLAY": ":0", "XAUTHORITY": "/home/u/.Xauthority",
            ])
    }

    @Test func theSessionPlacesThePrompt() {
        let agent = [
            "DISPLAY": ":7", "WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": "/run/user/1000",
            "XAUTHORITY": "/home/u/.Xauthority",
        ]
        let accept: (String) -> String? = { $0 }
        let path = "/org/freedesktop/login1/session/c1"
        let x11 = PromptDisplay.session(
            LogindSession(path: path, type: "x11", display: ":0", tty: ""), agent: agent, terminal: accept)
        #expect(x11.display == ":0" && x11.xauthority == "/home/u/.Xauthority")
        #expect(x11.waylandDisplay == nil && x11.tty == nil)
        let wayland = PromptDisplay.session(
            LogindSession(path: path, type: "wayland", display: "", tty: "tty2"), agent: agent, terminal: accept)
        #expect(wayland.waylandDisplay == "wayland-1" && wayland.runtimeDirectory == "/run/user/1000")
        #expect(wayland.display == nil && wayland.xauthority == nil && wayland.tty == "/dev/tty2")
        let terminal = PromptDisplay.session(
            LogindSession(path: path, type: "tty", display: "", tty: "pts/3"), agent: agent, terminal: { _ in nil })
        #expect(terminal.isEmpty, "a terminal that fails the check is not used")
        let fallback = PromptDisplay.agent(agent)
        #expect(fallback.display == ":7" && fallback.waylandDisplay == "wayland-1" && fallback.tty == nil)
    }

    @Test func onlyRealTerminalsOfTheUserPass() {
        #expect(PromptDisplay.verifiedTerminal("/dev/null") == nil)
        #expect(PromptDisplay.verifiedTerminal("/dev/pts/../null") == nil)
        #expect(PromptDisplay.verifiedTerminal("/tmp/pts/1") == nil)
        #expect(PromptDisplay.verifiedTerminal("/dev/ttyS0") == nil)
    }

    @Test func thePinentryComesFromAdministeredFilesOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prompt-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        let settings = directory + "/settings.json"
        let program = directory + "/pinentry"
        try "#!/bin/sh\n".write(toFile: program, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program)

        // No settings: the system path.
        let found = PromptPinentry.resolve(adminSettings: settings, searchPath: [directory + "/none", directory])
        if getuid() == 0 {
            #expect(found.map(\.path) == .success(program))
        } else {
            #expect(throws: PromptPinentry.Problem.self) { try found.get() }
        }
        #expect(
            PromptPinentry.resolve(adminSettings: settings, searchPath: [directory + "/none"]).map(\.path)
                == .failure(.init("no pinentry: \(settings) names none and none is installed in \(directory)/none")))
        try #"{"pinentry": "pinentry-gnome3"}"#.write(toFile: settings, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: settings)
        if getuid() == 0 {
            #expect(
                PromptPinentry.resolve(adminSettings: settings, searchPath: []).map(\.path)
                    == .failure(.init("\(settings): \"pinentry\" must be an absolute path")))
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: settings)
            #expect(
                PromptPinentry.resolve(adminSettings: settings, searchPath: []).map(\.path)
                    == .failure(.init("\(settings): component 'settings.json' is writable by group or others")))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: settings)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
            #expect(
                PromptPinentry.resolve(adminSettings: settings, searchPath: []).map(\.path)
                    == .failure(
                        .init(
                            "\(settings): component '\((directory as NSString).lastPathComponent)' is writable by group or others"
                        )))
        } else {
            #expect(throws: PromptPinentry.Problem.self) {
                try PromptPinentry.resolve(adminSettings: settings, searchPath: []).get()
            }
        }
    }
}
