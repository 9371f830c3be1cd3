import ArgumentParser
import CordonKit
import CordonPrompt
import CordonProtocol

/// Options every command accepts.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The agent's socket (default: $CORDON_SOCKET, else $XDG_RUNTIME_DIR/cordon/agent.sock).",
            valueName: "path"))
    var socket: String?

    /// The socket to use.
    var socketPath: String { socket ?? CordonSocket.defaultPath }

    /// Connects to the agent.
    func connect() async throws -> CordonClient {
        try await CordonClient.connect(socketPath: socketPath)
    }
}

/// The `--passcode-stdin` and `--no-pinentry` flags.
struct PasscodeOptions: ParsableArguments {
    @Flag(help: "Read the passcode from standard input, one per line, instead of asking for it.")
    var passcodeStdin = false

    @Flag(help: "Ask on the terminal (without echo) even when a pinentry program could be used.")
    var noPinentry = false

    /// The reader these flags select.
    func reader() -> PasscodeReader { PasscodeReader(fromStandardInput: passcodeStdin, pinentryAllowed: !noPinentry) }
}

extension PasscodeOptions {
    /// Reads the passcode, connects, and runs `body` with the client and the passcode; the
    /// connection is closed however `body` ends.
    func withClient<R>(_ global: GlobalOptions, _ body: (CordonClient, String) async throws -> R) async throws -> R {
        let reader = reader()
        defer { reader.finish() }
        try reader.checkAvailable()
        let client = try await global.connect()
        let current = try reader.read(.current)
        reader.finish()
        do {
            let result = try await body(client, current)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }
}
