import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon lock`: locks the container.
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock the container (the key may stay in memory, as the policy says).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let client = try await global.connect()
        try await client.lock()
        await client.close()
        try Output.line("locked")
    }
}
