import ArgumentParser
import CordonKit

/// `cordon unlock`: unlocks, asking for the passcode only when the agent needs it.
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the container.",
        discussion: """
            Within the re-authentication grace after a lock no passcode is needed; otherwise it is asked for \
            (without echo), or read from stdin with --passcode-stdin.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    func run() async throws {
        let client = try await global.connect()
        do {
            try await client.unlock(passcode: nil)
        } catch CordonError.passcodeRequired {
            let secret = try passcode.reader.read(prompt: "Passcode: ")
            try await client.unlock(passcode: secret)
        }
        await client.close()
        try Output.line("unlocked")
    }
}
