import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon wipe --yes`: crypto-erases the container.
struct WipeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe",
        abstract: "Erase the container for good: the master key is destroyed, so every app's data is lost.",
        discussion: """
            Asks for the passcode (a wipe needs it, so no other program can erase the container; a \
            wrong one counts as a failed attempt). With --passcode-stdin, stdin holds the passcode. \
            Afterwards the container is uninitialized: run `cordon init` to start over. With --app ID, \
            only that app's data is crypto-erased (no --yes needed): its random key is destroyed, its \
            storage deleted, and the app is told with a Wiped event.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Flag(help: "Confirm that everything in the container may be erased.")
    var yes = false

    @Option(
        help: ArgumentHelp(
            "Erase only this app's data (selective wipe): its key is rotated and its storage deleted.",
            valueName: "app-id"))
    var app: String?

    func run() async throws {
        if let app {
            let reader = passcode.reader()
            defer { reader.finish() }
            try reader.checkAvailable()
            let client = try await global.connect()
            let current = try reader.read(.current)
            reader.finish()
            do {
                try await client.wipeApp(app, passcode: current)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
            try Output.line("wiped \(app)'s data; other apps are untouched")
            return
        }
        guard yes else {
            throw CLIError(
                "refusing to wipe without --yes",
                hint: "`cordon wipe --yes` destroys the key and, with it, every app's data", code: .usage)
        }
        let reader = passcode.reader()
        defer { reader.finish() }
        try reader.checkAvailable()
        let client = try await global.connect()
        let current = try reader.read(.current)
        reader.finish()
        try await client.wipe(passcode: current)
        await client.close()
        try Output.line("wiped; the container is uninitialized: run `cordon init` to start over")
    }
}
