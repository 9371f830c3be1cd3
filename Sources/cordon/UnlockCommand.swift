import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon unlock`: unlocks, asking for the passcode only when the agent needs it.
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the container.",
        discussion: """
            Within the re-authentication grace after a lock no passcode is needed; otherwise it is asked for \
            through pinentry (when one is configured or found and a display or terminal is there; a wrong \
            passcode is asked again, up to \(maxTries) tries), else on the terminal without echo, or read from \
            stdin with --passcode-stdin. cordond runs `cordon unlock --pinentry-only --requested-by APP` itself \
            for an app's implicit unlock (io.cordon.App.RequestUnlock).
            """)

    /// The most passcodes one `cordon unlock` asks pinentry for.
    static let maxTries = 3

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Flag(help: "Ask through pinentry only: fail (exit 2) when no pinentry program or display is there.")
    var pinentryOnly = false

    @Option(help: ArgumentHelp("Name the app that asked for the unlock in the prompt.", valueName: "app-id"))
    var requestedBy: String?

    func run() async throws {
        let reader = pinentryOnly ? PasscodeReader(fromStandardInput: false, pinentryRequired: true) : passcode.reader()
        if pinentryOnly { try reader.checkAvailable() }
        let client = try await global.connect()
        defer { reader.finish() }
        do {
            try await client.unlock(passcode: nil)
        } catch CordonError.passcodeRequired {
            var error: String?
            for attempt in 1...Self.maxTries {
                let secret = try reader.read(.unlock(error: error, requestedBy: requestedBy))
                do {
                    try await client.unlock(passcode: secret)
                    break
                } catch CordonError.wrongPasscode(let attemptsLeft, let retryAfter)
                    where reader.usesPinentry && attemptsLeft > 0 && retryAfter <= 0 && attempt < Self.maxTries
                {
                    error = "Wrong passcode, \(Format.count(attemptsLeft, "attempt")) left."
                }
            }
        }
        reader.finish()
        await client.close()
        try Output.line("unlocked")
    }
}
