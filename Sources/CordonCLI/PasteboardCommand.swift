import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon pasteboard`: the managed pasteboard, as an unmanaged client (or as an app with --app).
struct PasteboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pasteboard",
        abstract: "Copy to, paste from and clear the managed pasteboard.",
        discussion: """
            The CLI is an unmanaged client unless --app registers it as an app first (the policy then \
            says whether that app is managed), so the policy's pasteboard.copyOut level and maxChars can be \
            seen at work: copying out of a managed app and pasting here is refused unless copyOut is `any`.
            """,
        subcommands: [PasteboardCopyCommand.self, PasteboardPasteCommand.self, PasteboardClearCommand.self])
}

/// Options of every pasteboard command.
struct PasteboardOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Register as this app first (managed or not, as the policy says).", valueName: "app-id"))
    var app: String?

    /// The pasteboard, as the app when --app is given; `close` ends the connection.
    func connect() async throws -> (pasteboard: CordonPasteboard, close: @Sendable () async -> Void) {
        if let app {
            let registered = try await CordonApp.connect(appId: app, socketPath: global.socketPath)
            return (registered.pasteboard, { await registered.close() })
        }
        let client = try await global.connect()
        return (client.pasteboard, { await client.close() })
    }
}

/// `cordon pasteboard copy [TEXT]`: copies TEXT, or standard input.
struct PasteboardCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy", abstract: "Copy TEXT (or standard input) to the managed pasteboard.")

    @OptionGroup var options: PasteboardOptions

    @Option(help: "The content's MIME type.")
    var type = "text/plain"

    @Argument(help: "The text to copy; read from standard input when absent.")
    var text: String?

    func run() async throws {
        let content = text ?? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        let (pasteboard, close) = try await options.connect()
        let copied = try await pasteboard.copy(content, mimeType: type)
        await close()
        if let kept = copied.truncatedTo {
            try Output.line("copied, cut to \(Format.count(kept, "character")): \(copied.decision.reason)")
        } else {
            try Output.line("copied \(Format.count(content.count, "character"))")
        }
    }
}

/// `cordon pasteboard paste`: prints the content, if the policy lets this client have it.
struct PasteboardPasteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paste", abstract: "Print the managed pasteboard's content, as the policy allows.")

    @OptionGroup var options: PasteboardOptions

    func run() async throws {
        let (pasteboard, close) = try await options.connect()
        let pasted = try await pasteboard.paste()
        await close()
        try Output.line(pasted.content)
        if let kept = pasted.truncatedTo {
            Output.note("cordon: cut to \(Format.count(kept, "character")): \(pasted.decision.reason)")
        }
    }
}

/// `cordon pasteboard clear`.
struct PasteboardClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Empty the managed pasteboard.")

    @OptionGroup var options: PasteboardOptions

    func run() async throws {
        let (pasteboard, close) = try await options.connect()
        try await pasteboard.clear()
        await close()
        try Output.line("cleared")
    }
}
