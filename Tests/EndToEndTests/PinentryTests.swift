import Foundation
import Testing

/// `cordon init`, `unlock` and `passwd` asking through pinentry (a fake one speaking Assuan).
/// cordond, the CLI and the pinentry it runs are one ordinary user (``UserAgent``: outside test
/// mode); the pinentry's files are root's, what it records the user's.
@Suite struct PinentryTests {
    /// Strong enough outside test mode (no TPM: the software-only rules), and percent-encoded
    /// on its way back from pinentry.
    static let passcode = "50% off now"

    /// A cordond run as the user, not initialized.
    static func agent() async throws -> UserAgent {
        try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
    }

    func cordon(
        _ agent: UserAgent, _ arguments: [String], pinentry: FakePinentry, input: String? = nil,
        environment: [String: String] = [:]
    ) async throws -> CommandResult {
        try await agent.cli(arguments, input: input, environment: pinentry.environment.merging(environment) { $1 })
    }

    func state(_ agent: UserAgent) async throws -> String {
        let result = try await agent.cli(["status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?["state"] as? String)
    }

    /// Initializes with `passcode` through stdin.
    func initialize(_ agent: UserAgent, _ pinentry: FakePinentry) async throws {
        let result = try await cordon(
            agent, ["init", "--passcode-stdin"], pinentry: pinentry, input: Self.passcode + "\n")
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func initThenUnlock() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(pins: [Self.passcode, Self.passcode], user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        let initialized = try await cordon(agent, ["init"], pinentry: pinentry)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let dialogue = pinentry.commands
        #expect(dialogue.first == "SETTITLE Cordon")
        #expect(dialogue.contains("SETDESC Choose the new passcode for the Cordon container."))
        #expect(dialogue.contains("SETDESC Repeat the passcode to confirm it."))
        #expect(dialogue.filter { $0 == "SETPROMPT Passcode:" }.count == 2)
        #expect(dialogue.filter { $0 == "GETPIN" }.count == 2)
        #expect(dialogue.last == "BYE")
        #expect(!dialogue.contains { $0.hasPrefix("OPTION ttyname") }, "no tty in tests: \(dialogue)")

        // The percent-encoded D line was decoded: the raw passcode unlocks.
        let unlocked = try await cordon(
            agent, ["unlock", "--passcode-stdin"], pinentry: pinentry, input: Self.passcode + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try await agent.cli(["logout"]).status == 0)

        try pinentry.setPins([Self.passcode])
        let again = try await cordon(agent, ["unlock"], pinentry: pinentry)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("unlocked"))
        #expect(
            pinentry.commands.contains(
                "SETDESC Enter the passcode to unlock the Cordon container.%0AApps get their keys once it is unlocked."
            ), "the newline in the description is percent-escaped: \(pinentry.commands)")
        #expect(!pinentry.commands.contains { $0.hasPrefix("SETERROR") })
        #expect(try await state(agent) == "unlocked")
    }

    /// The pinentry is another program (`$PINENTRY`, settings.json): it gets its pipes and
    /// nothing else of cordon, not the connection to cordond that `cordon unlock` holds.
    @Test func pinentryGetsNoDescriptorOfCordon() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        try await initialize(agent, pinentry)
        try pinentry.setPins([Self.passcode])
        let unlocked = try await cordon(agent, ["unlock"], pinentry: pinentry)
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let descriptors = pinentry.descriptors
        #expect(descriptors.count >= 3, "the listing was written: \(descriptors)")
        #expect(!descriptors.contains { $0.contains("socket:") }, "a socket reached pinentry: \(descriptors)")
        #expect(!descriptors.contains { $0.contains("anon_inode:") }, "cordon's event loop reached it: \(descriptors)")
    }

    @Test func wrongThenRight() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        try await initialize(agent, pinentry)
        try pinentry.setPins(["9999-wrong", Self.passcode])
        let unlocked = try await cordon(agent, ["unlock"], pinentry: pinentry)
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let dialogue = pinentry.commands
        #expect(dialogue.filter { $0 == "GETPIN" }.count == 2)
        let errors = dialogue.filter { $0.hasPrefix("SETERROR ") }
        #expect(errors == ["SETERROR Wrong passcode, 9 attempts left."], "\(dialogue)")
        if let error = dialogue.firstIndex(of: "SETERROR Wrong passcode, 9 attempts left."),
            let secondPin = dialogue.lastIndex(of: "GETPIN")
        {
            #expect(error < secondPin, "SETERROR comes before the second GETPIN")
        }
        #expect(try await state(agent) == "unlocked")
    }

    @Test func threeWrongPasscodesExitFour() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        try await initialize(agent, pinentry)
        try pinentry.setPins(["1111-wrong", "2222-wrong", "3333-wrong", Self.passcode])
        let result = try await cordon(agent, ["unlock"], pinentry: pinentry)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("7 attempts left"), "\(result.stderr)")
        #expect(pinentry.commands.filter { $0 == "GETPIN" }.count == 3)
        #expect(pinentry.commands.last == "BYE")
        #expect(try await state(agent) == "lockedNoKey")
    }

    @Test func cancelExitsEight() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        try await initialize(agent, pinentry)
        try pinentry.setPins(["CANCEL"])
        let result = try await cordon(agent, ["unlock"], pinentry: pinentry)
        #expect(result.status == 8, "\(result.stderr)")
        #expect(result.stderr.contains("cordon: error: the passcode prompt was cancelled"), "\(result.stderr)")
        #expect(result.stderr.contains("hint:"))
        #expect(pinentry.commands.last == "BYE", "the dialogue is closed after a cancel")
        #expect(try await state(agent) == "lockedNoKey")

        try pinentry.setPins(["CANCEL"])
        let passwdCancelled = try await cordon(agent, ["passwd"], pinentry: pinentry)
        #expect(passwdCancelled.status == 8, "\(passwdCancelled.stderr)")
    }

    @Test func settingsFileNamesThePinentryAndNoPinentryTurnsItOff() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(pins: [Self.passcode, Self.passcode], user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        let settings = try JSONSerialization.data(withJSONObject: ["pinentry": pinentry.script])
        try settings.write(to: URL(fileURLWithPath: pinentry.configDirectory + "/settings.json"))

        let forced = try await cordon(agent, ["init", "--no-pinentry"], pinentry: pinentry)
        #expect(forced.status == 2, "no terminal in tests: \(forced.stderr)")
        #expect(forced.stderr.contains("--passcode-stdin"))
        #expect(pinentry.commands.isEmpty)

        let fromSettings = try await cordon(agent, ["init"], pinentry: pinentry, environment: ["PINENTRY": ""])
        #expect(fromSettings.status == 0, "\(fromSettings.stderr)")
        #expect(pinentry.commands.filter { $0 == "GETPIN" }.count == 2)

        let missing = try await cordon(
            agent, ["unlock"], pinentry: pinentry, environment: ["PINENTRY": pinentry.directory.appending("none")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("PINENTRY") && missing.stderr.contains("--no-pinentry"), "\(missing.stderr)")
    }

    /// What cordond runs for `RequestUnlock`: `--pinentry` beats `$PINENTRY` and settings.json, and
    /// the prompt names only a valid app id.
    @Test func theAgentsPinentryAndRequesterAreTheOnlyOnesUsed() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(pins: [Self.passcode], user: true)
        let trap = try FakePinentry(pins: [Self.passcode], user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
            trap.remove()
        }
        try await initialize(agent, pinentry)
        let settings = try JSONSerialization.data(withJSONObject: ["pinentry": trap.script])
        try settings.write(to: URL(fileURLWithPath: pinentry.configDirectory + "/settings.json"))
        let trapped = ["PINENTRY": trap.script]

        let forged = try await cordon(
            agent, ["unlock", "--pinentry-only", "--requested-by", "IT Security: re-enter passcode"],
            pinentry: pinentry, environment: trapped)
        #expect(forged.status == 2, "\(forged.stderr)")
        #expect(forged.stderr.contains("--requested-by 'IT Security: re-enter passcode': the app id may only contain"))
        let relative = try await cordon(
            agent, ["unlock", "--pinentry-only", "--pinentry", "pinentry"], pinentry: pinentry, environment: trapped)
        #expect(relative.status == 2 && relative.stderr.contains("must be an absolute path"), "\(relative.stderr)")

        let unmanaged = try await cordon(
            agent,
            [
                "unlock", "--pinentry-only", "--pinentry", pinentry.script, "--requested-by", "com.example.x",
                "--unmanaged",
            ],
            pinentry: pinentry, environment: trapped)
        #expect(unmanaged.status == 0, "\(unmanaged.stderr)")
        #expect(
            pinentry.commands.contains {
                $0.hasPrefix("SETDESC com.example.x, an app the policy does not manage, asks to unlock")
            }, "\(pinentry.commands)")
        #expect(trap.commands.isEmpty, "neither $PINENTRY nor settings.json replaced --pinentry")
    }

    @Test func aPinentryThatNeverAnswersTimesOut() async throws {
        let agent = try await Self.agent()
        let pinentry = try FakePinentry(user: true)
        defer {
            agent.cleanUp()
            pinentry.remove()
        }
        try await initialize(agent, pinentry)
        try pinentry.setPins(["HANG"])
        let result = try await cordon(
            agent, ["unlock"], pinentry: pinentry, environment: ["CORDON_PINENTRY_TIMEOUT": "0.5"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("pinentry did not finish"), "\(result.stderr)")
    }
}
