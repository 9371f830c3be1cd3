import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon passwd`: changes the passcode.
struct PasswdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the passcode (the master key is re-wrapped; no data is re-encrypted).",
        discussion: "With --passcode-stdin, stdin holds two lines: the current passcode, then the new one.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    func run() async throws {
        let reader = passcode.reader()
        defer { reader.finish() }
        try reader.checkAvailable()
        let client = try await global.connect()
        let old = try reader.read(.current)
        let new = try reader.readNew(.new, repeat: .repeated)
        reader.finish()
        try await client.changePasscode(old: old, new: new)
        await client.close()
        try Output.line("passcode changed")
    }
}
