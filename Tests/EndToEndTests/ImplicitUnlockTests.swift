import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `RequestUnlock`: an app asks, the agent unlocks within the grace or prompts through pinentry
/// (the fake one, named in admin settings the agent trusts only when root owns them).
@Suite(.enabled(if: getuid() == 0, "the agent runs only a root-owned pinentry")) struct ImplicitUnlockTests {
    static let passcode = "2468"

    static func start(_ pinentry: FakePinentry?, arguments: [String] = ["--reauth-grace", "0"]) async throws
        -> (DaemonProcess, CordonClient, CordonApp)
    {
        let environment =
            pinentry?.agentEnvironment ?? [
                "CORDON_ADMIN_SETTINGS": "/nonexistent/settings.json", "PINENTRY": "", "DISPLAY": "",
                "WAYLAND_DISPLAY": "",
            ]
        let daemon = try await DaemonProcess.started(arguments: arguments, environment: environment)
        let client = try await daemon.client()
        try await client.initialize(passcode: passcode)
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        return (daemon, client, app)
    }

    @Test func withinTheGraceNoPromptIsShown() async throws {
        let pinentry = try FakePinentry(pins: [])
        defer { pinentry.remove() }
        let (daemon, client, app) = try await Self.start(pinentry, arguments: ["--reauth-grace", "600"])
        defer { daemon.cleanUp() }
        try await client.unlock(passcode: Self.passcode)
        try await client.lock()
        #expect(try await app.requestUnlock() == false)
        #expect(try await client.status().state == .unlocked)
        #expect(pinentry.commands.isEmpty)
        await app.close()
        try await daemon.stop()
    }

    @Test func outsideTheGraceTheUserIsPrompted() async throws {
        let pinentry = try FakePinentry(pins: ["1111", Self.passcode])
        defer { pinentry.remove() }
        let (daemon, client, app) = try await Self.start(pinentry)
        defer { daemon.cleanUp() }
        #expect(try await app.requestUnlock() == true)
        #expect(try await client.status().state == .unlocked)
        let dialogue = pinentry.commands
        // The SDK asks on a connection of its own: the registration of its process names it.
        #expect(dialogue.contains { $0.hasPrefix("SETDESC com.example.notes asks to unlock the Cordon container.") })
        #expect(dialogue.contains { $0.hasPrefix("SETERROR Wrong passcode") }, "\(dialogue)")
        _ = try await app.key()
        await app.close()
        try await daemon.stop()
    }

    @Test func cancellingThePromptFailsTheRequest() async throws {
        let pinentry = try FakePinentry(pins: ["CANCEL"])
        defer { pinentry.remove() }
        let (daemon, client, app) = try await Self.start(pinentry)
        defer { daemon.cleanUp() }
        await #expect(throws: CordonError.unlockCancelled) { try await app.requestUnlock() }
        #expect(try await client.status().state == .lockedNoKey)
        await app.close()
        try await daemon.stop()
    }

    @Test func anUnlockFromElsewhereAnswersTheWaitingApp() async throws {
        let pinentry = try FakePinentry(pins: ["HANG"])
        defer { pinentry.remove() }
        let (daemon, client, app) = try await Self.start(pinentry)
        defer { daemon.cleanUp() }
        let waiting = Task { try await app.requestUnlock(timeoutSeconds: 300) }
        try await eventually("the prompt is up") { pinentry.commands.contains("GETPIN") }
        try await client.unlock(passcode: Self.passcode)
        #expect(try await waiting.value == true)
        await app.close()
        try await daemon.stop()
    }

    /// The prompt program the agent runs gets none of the agent's sockets (its listening
    /// socket, the requesting app's connection): it lists its descriptors, then cancels.
    @Test func thePromptProgramGetsNoSocketOfTheAgent() async throws {
        let pinentry = try FakePinentry(pins: [])
        defer { pinentry.remove() }
        let prompt = pinentry.directory.appending("prompt")
        let listing = pinentry.directory.appending("prompt-descriptors")
        try "#!/bin/sh\nls -l /proc/$$/fd > \(listing) 2>&1\nexit 8\n".write(
            toFile: prompt, atomically: true, encoding: .utf8)
        chmod(prompt, 0o755)
        let (daemon, _, app) = try await Self.start(
            pinentry, arguments: ["--reauth-grace", "0", "--prompt-program", prompt])
        defer { daemon.cleanUp() }
        await #expect(throws: CordonError.unlockCancelled) { try await app.requestUnlock() }
        let inherited = Set(Self.socketInodes(in: (try? String(contentsOfFile: listing, encoding: .utf8)) ?? ""))
        let agents = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd")) ?? []
        let agentSockets = Set(
            Self.socketInodes(
                in: agents.compactMap {
                    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/fd/\($0)")
                }.joined(separator: "\n")))
        #expect(agentSockets.count >= 2, "the listening socket and the app's connection")
        #expect(inherited.isDisjoint(with: agentSockets), "the prompt holds the agent's sockets \(inherited)")
        await app.close()
        try await daemon.stop()
    }

    /// The inode numbers of `socket:[N]` in `text`.
    static func socketInodes(in text: String) -> [String] {
        text.components(separatedBy: "socket:[").dropFirst().compactMap {
            $0.split(separator: "]").first.map(String.init)
        }
    }

    @Test func withoutPinentryTheAppIsToldAtOnce() async throws {
        let (daemon, _, app) = try await Self.start(nil)
        defer { daemon.cleanUp() }
        do {
            try await app.requestUnlock()
            Issue.record("unlocked without a prompt")
        } catch CordonError.unlockUnavailable(let reason) {
            #expect(reason.contains("no display or terminal to ask on"), "\(reason)")
        }
        await app.close()
        try await daemon.stop()
    }
}
