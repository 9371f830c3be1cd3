import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon token`: software tokens kept by the agent (RSA SecurID, OATH HOTP/TOTP).
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Import software tokens and read their codes; seeds stay encrypted in the container.",
        discussion: """
            Every subcommand asks for the passcode (checked and counted by the agent, and audited). \
            code works only when the policy's tokens.cliReadsCodes allows it.
            """,
        subcommands: [
            TokenImportCommand.self, TokenListCommand.self, TokenCodeCommand.self, TokenRenameCommand.self,
            TokenRemoveCommand.self, TokenResetCommand.self,
        ])
}

/// The options every `cordon token` subcommand takes.
struct TokenOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    func run<R>(_ body: (CordonClient, String) async throws -> R) async throws -> R {
        try await passcode.withClient(global, body)
    }
}

/// `cordon token import SOURCE` (or `--file SDTID`).
struct TokenImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import a CTF string or URL, an otpauth:// or otpauth-migration:// URI, an SDTID file, or a CT-KIP URL.",
        discussion: """
            SOURCE or the file is at most 16 KiB (16384 bytes) of text; a larger one is refused before \
            anything is sent. An import is all or nothing: a batch that would pass tokens.maxTokens, or \
            holds an entry that cannot be read, stores none of its tokens.
            """)

    @OptionGroup var options: TokenOptions

    @Argument(help: "The CTF string, CTF URL, otpauth URI or CT-KIP URL (omit with --file).")
    var source: String?

    @Option(help: ArgumentHelp("An SDTID file to import.", valueName: "path"))
    var file: String?

    @Option(help: "The token's password, when it has one.")
    var password: String?

    @Option(help: "A PIN to keep with the token.")
    var pin: String?

    @Option(help: "A nickname (at most 32 characters).")
    var nickname: String?

    @Flag(
        help:
            "CT-KIP: retry without validating the server's certificate (audited; the policy's tokens.ctkipAllowInsecure must allow it)."
    )
    var insecure = false

    func validate() throws {
        guard (source == nil) != (file == nil) else {
            throw ValidationError("give either a CTF string or URI, or --file with an SDTID file")
        }
    }

    func run() async throws {
        let data: String
        if let file {
            data = try TokenImportInput.read(file: file)
        } else {
            data = source ?? ""
            try TokenImportInput.check(data, name: "the SOURCE argument")
        }
        let imported = try await options.run { client, passcode in
            try await client.importTokens(
                data, password: password, pin: pin, nickname: nickname, passcode: passcode, insecure: insecure)
        }
        for token in imported { try Output.line("imported \(token.serial) (\(token.kind), \(token.digits) digits)") }
    }
}

/// `cordon token list`.
struct TokenListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the tokens' metadata and this device's id (what a bound SecurID token is issued to).")

    @OptionGroup var options: TokenOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let reply = try await options.run { client, passcode in try await client.tokenList(passcode: passcode) }
        let tokens = reply.tokens
        if json {
            try Output.line(try Output.json(tokens))
            return
        }
        if tokens.isEmpty {
            try Output.line("no tokens")
        } else {
            try table(tokens)
        }
        try Output.line(
            "device id: \(reply.deviceId ?? "unknown (cordond cannot read /etc/machine-id)")"
                + " (a bound SecurID token must be issued to it)")
    }

    private func table(_ tokens: [TokenInfo]) throws {
        let rows = tokens.map { token in
            [
                token.serial, token.kind, token.nickname, "\(token.digits)", "\(token.interval)s", token.pinMode,
                token.expiry.map { Self.day($0) } ?? "-",
            ]
        }
        let header = ["SERIAL", "KIND", "NICKNAME", "DIGITS", "INTERVAL", "PIN", "EXPIRES"]
        for line in Format.table([header] + rows) { try Output.line(line) }
    }

    static func day(_ time: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time)))
    }
}

/// `cordon token code SERIAL`.
struct TokenCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Print a token's current code; for a timed token also the next one and the seconds left.")

    @OptionGroup var options: TokenOptions

    @Argument(help: "The token's serial.")
    var serial: String

    @Option(help: "The PIN, for a token that needs one.")
    var pin: String?

    func run() async throws {
        let code = try await options.run { client, passcode in
            try await client.tokenCode(serial: serial, pin: pin, passcode: passcode)
        }
        try Output.line(code.code)
        if let next = code.next, code.secondsLeft > 0 {
            Output.note("next: \(next), \(code.secondsLeft) s left")
        }
    }
}

/// `cordon token rename SERIAL NICKNAME`.
struct TokenRenameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rename", abstract: "Give a token a nickname.")

    @OptionGroup var options: TokenOptions
    @Argument(help: "The token's serial.") var serial: String
    @Argument(help: "The nickname (at most 32 characters).") var nickname: String

    func run() async throws {
        try await options.run { client, passcode in
            try await client.renameToken(serial: serial, nickname: nickname, passcode: passcode)
        }
        try Output.line("renamed \(serial) to \(nickname)")
    }
}

/// `cordon token rm SERIAL`.
struct TokenRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a token.")

    @OptionGroup var options: TokenOptions
    @Argument(help: "The token's serial.") var serial: String

    func run() async throws {
        try await options.run { client, passcode in try await client.removeToken(serial: serial, passcode: passcode) }
        try Output.line("removed \(serial)")
    }
}

/// `cordon token reset --yes`.
struct TokenResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Delete every token (with a new key for the next ones).")

    @OptionGroup var options: TokenOptions
    @Flag(help: "Confirm: every token is deleted.") var yes = false

    func validate() throws {
        guard yes else { throw ValidationError("reset deletes every token; confirm with --yes") }
    }

    func run() async throws {
        try await options.run { client, passcode in try await client.resetTokens(passcode: passcode) }
        try Output.line("every token was deleted")
    }
}
