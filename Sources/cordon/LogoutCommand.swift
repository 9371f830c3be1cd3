import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon logout`: revokes the key.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke the key: every app is told to halt, and the next unlock needs the passcode.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let client = try await global.connect()
        try await client.logout()
        await client.close()
        try Output.line("logged out; the key is revoked")
    }
}
