import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon wipe --yes`: crypto-erases the container.
struct WipeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe",
        abstract: "Erase the container for good: the master key is destroyed, so every app's data is lost.",
        discussion: "The container must be unlocked. Afterwards it is uninitialized: run `cordon init` to start over.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Confirm that everything in the container may be erased.")
    var yes = false

    func run() async throws {
        guard yes else {
            throw CLIError(
                "refusing to wipe without --yes",
                hint: "`cordon wipe --yes` destroys the key and, with it, every app's data", code: .usage)
        }
        let client = try await global.connect()
        try await client.wipe()
        await client.close()
        try Output.line("wiped; the container is uninitialized: run `cordon init` to start over")
    }
}
