import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon init`: sets the first passcode.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Set the first passcode (asked twice: through pinentry, or on the terminal without echo).",
        discussion: "The container stays locked until `cordon unlock`.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    func run() async throws {
        let reader = passcode.reader()
        defer { reader.finish() }
        try reader.checkAvailable()
        let client = try await global.connect()
        // Fail before asking for a passcode that could not be used.
        if try await client.status().state != .uninitialized { throw CordonError.alreadyInitialized }
        let secret = try reader.readNew(.new, repeat: .repeated)
        reader.finish()
        try await client.initialize(passcode: secret)
        await client.close()
        try Output.line("initialized; the container is locked: run `cordon unlock`")
    }
}
