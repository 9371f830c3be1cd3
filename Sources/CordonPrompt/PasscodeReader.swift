import CordonProtocol
import Foundation

/// Reads passcodes, in this order of preference: standard input (`--passcode-stdin`); pinentry,
/// when one is configured or found and a display or terminal is there (not with `--no-pinentry`);
/// the terminal without echo; otherwise it fails and tells to use `--passcode-stdin`.
///
/// Bytes are read into buffers that are zeroed before they are freed; the passcode is never printed.
/// A pinentry started for one command serves all its prompts; `finish()` ends it.
public final class PasscodeReader {
    /// The longest passcode accepted, in bytes.
    public static let maxBytes = 1024

    /// Where passcodes come from.
    public enum Method: Equatable {
        case standardInput
        case pinentry(PinentryProgram)
        case terminal
    }

    /// Read lines from stdin instead of prompting.
    let fromStandardInput: Bool
    /// Whether pinentry may be used (`--no-pinentry` turns it off).
    let pinentryAllowed: Bool
    /// Whether only pinentry may be used (`--pinentry-only`, as cordond runs it).
    let pinentryRequired: Bool
    /// The pinentry to run (`--pinentry`, as cordond passes it), instead of `$PINENTRY`, the
    /// settings file or `PATH`.
    let pinentryProgram: String?
    /// The pinentry's descriptor, when cordond passed the program it opened (`--pinentry-from-stdin`).
    let pinentryDescriptor: Int32?
    private var resolved: Method?
    private var session: PinentrySession?

    public init(
        fromStandardInput: Bool, pinentryAllowed: Bool = true, pinentryRequired: Bool = false,
        pinentryProgram: String? = nil, pinentryDescriptor: Int32? = nil
    ) {
        self.fromStandardInput = fromStandardInput
        self.pinentryDescriptor = pinentryDescriptor
        self.pinentryProgram = pinentryProgram
        self.pinentryAllowed = pinentryAllowed || pinentryRequired
        self.pinentryRequired = pinentryRequired
    }

    deinit { session?.close() }

    /// How passcodes will be read; fails when there is neither pinentry nor a terminal.
    public func method() throws -> Method {
        if let resolved { return resolved }
        let method: Method
        if fromStandardInput {
            method = .standardInput
        } else if pinentryAllowed,
            let program = try PinentryProgram.find(program: pinentryProgram, descriptor: pinentryDescriptor)
        {
            method = .pinentry(program)
        } else if pinentryRequired {
            throw ErrorText(
                "no pinentry program and display to ask for the passcode on", hint: Self.pinentryHint, exit: .usage)
        } else if isatty(STDIN_FILENO) == 1 {
            method = .terminal
        } else {
            throw Self.noTerminal
        }
        resolved = method
        return method
    }

    /// Whether the passcodes come from pinentry.
    public var usesPinentry: Bool {
        if case .pinentry = resolved { return true }
        return false
    }

    /// Fails unless a passcode can be read: call it before connecting, so scripts fail fast.
    public func checkAvailable() throws { _ = try method() }

    /// Reads one passcode for `request`.
    public func read(_ request: PasscodeRequest) throws -> String {
        switch try method() {
        case .standardInput: return try Self.readStandardInput(prompt: request.prompt)
        case .terminal: return try Self.readTerminal(prompt: request.prompt)
        case .pinentry(let program):
            let session = try self.session ?? PinentrySession(program: program)
            self.session = session
            return try session.getPin(description: request.description, error: request.error)
        }
    }

    /// Reads a new passcode twice (once from stdin) and checks that both match.
    public func readNew(_ request: PasscodeRequest, repeat confirmation: PasscodeRequest) throws -> String {
        let first = try read(request)
        if fromStandardInput { return first }
        let second = try read(confirmation)
        guard first == second else {
            throw ErrorText(
                "the two passcodes do not match", hint: "run the command again and type the same passcode")
        }
        return first
    }

    /// Ends the pinentry dialogue, if one was started.
    public func finish() {
        session?.close()
        session = nil
    }

    /// The error when there is no terminal to ask on.
    public static let pinentryHint =
        "install pinentry (e.g. pinentry-gnome3 or pinentry-curses) or set $PINENTRY / \"pinentry\" in settings.json "
        + "(for cordond's prompt: \"pinentry\" in /etc/cordon/settings.json); a display (DISPLAY or WAYLAND_DISPLAY) "
        + "or a terminal is needed, or run `cordon unlock` yourself"

    public static let noTerminal = ErrorText(
        "standard input is not a terminal and no pinentry can be used, so the passcode cannot be asked for",
        hint: "add --passcode-stdin and pipe the passcode in, one per line (e.g. `... --passcode-stdin < file`)",
        exit: .usage)
}

/// What a passcode is asked for: a terminal prompt and, for pinentry, a description and an error.
public struct PasscodeRequest: Sendable {
    /// The terminal prompt, e.g. `Passcode: `.
    public var prompt: String
    /// The pinentry description (SETDESC).
    public var description: String
    /// The pinentry error on a retry (SETERROR).
    public var error: String?

    public init(prompt: String, description: String, error: String? = nil) {
        self.prompt = prompt
        self.description = description
        self.error = error
    }

    /// Who asked for an unlock, as cordond tells (`--requested-by`, `--unmanaged`, `--unregistered`).
    public enum Requester: Equatable, Sendable {
        /// A registered app (its verified reverse-DNS id).
        case app(String)
        /// A registered app the policy does not manage.
        case unmanagedApp(String)
        /// A client that is not a registered app.
        case unregistered

        /// The description's first line.
        var line: String {
            switch self {
            case .app(let appId): return "\(appId) asks to unlock the Cordon container."
            case .unmanagedApp(let appId):
                return "\(appId), an app the policy does not manage, asks to unlock the Cordon container."
            case .unregistered: return "A program that is not a registered app asks to unlock the Cordon container."
            }
        }
    }

    /// The passcode to unlock; `error` after a wrong one; `requester` says who asked.
    public static func unlock(error: String? = nil, requester: Requester? = nil) -> PasscodeRequest {
        let asker = requester.map { $0.line + "\n" } ?? ""
        return PasscodeRequest(
            prompt: "Passcode: ",
            description: asker
                + "Enter the passcode to unlock the Cordon container.\nApps get their keys once it is unlocked.",
            error: error)
    }

    /// The current passcode, for `passwd`.
    public static let current = PasscodeRequest(
        prompt: "Current passcode: ", description: "Enter the current passcode of the Cordon container.")

    /// A new passcode.
    public static let new = PasscodeRequest(
        prompt: "New passcode: ", description: "Choose the new passcode for the Cordon container.")

    /// The new passcode again.
    public static let repeated = PasscodeRequest(
        prompt: "Repeat the new passcode: ", description: "Repeat the passcode to confirm it.")
}
