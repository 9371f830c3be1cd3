import ArgumentParser
import CordonKit
import CordonPrompt
import CordonProtocol
import Foundation

/// `cordon unlock`: unlocks, asking for the passcode only when the agent needs it.
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the container.",
        discussion: """
            Within the re-authentication grace after a lock no passcode is needed; otherwise it is asked for \
            through pinentry (when one is configured or found and a display or terminal is there; a wrong \
            passcode is asked again, up to \(maxTries) tries), else on the terminal without echo, or read from \
            stdin with --passcode-stdin. The pinentry is $PINENTRY, else "pinentry" in settings.json, else \
            pinentry on PATH: you started this command, in your own terminal and environment. cordond runs \
            `cordon unlock --pinentry-only --pinentry PROGRAM --requested-by APP` itself for an app's implicit \
            unlock (io.cordon.App.RequestUnlock), with the pinentry it chose (admin settings or the system's) \
            and the app's verified id.
            """)

    /// The most passcodes one `cordon unlock` asks pinentry for.
    static let maxTries = 3

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Flag(help: "Ask through pinentry only: fail (exit 2) when no pinentry program or display is there.")
    var pinentryOnly = false

    @Option(
        help: ArgumentHelp(
            "Run this pinentry (an absolute path) instead of $PINENTRY or the one in settings.json.",
            valueName: "program"))
    var pinentry: String?

    @Flag(
        help: ArgumentHelp(
            "Run the program open on standard input as the pinentry, --pinentry naming it (cordond passes the one it checked).",
            visibility: .hidden))
    var pinentryFromStdin = false

    @Option(
        help: ArgumentHelp("Name the app that asked for the unlock in the prompt (an app id).", valueName: "app-id"))
    var requestedBy: String?

    @Flag(help: "Say in the prompt that the app named by --requested-by is not managed by the policy.")
    var unmanaged = false

    @Flag(help: "Say in the prompt that a client that is not a registered app asked for the unlock.")
    var unregistered = false

    @Flag(help: "Unlock with a fingerprint (fprintd) first; the passcode is asked when it cannot.")
    var fingerprint = false

    func validate() throws {
        if let requestedBy, let problem = AppIdentifier.problem(with: requestedBy) {
            throw ValidationError("--requested-by '\(requestedBy)': \(problem)")
        }
        if unmanaged && requestedBy == nil {
            throw ValidationError("--unmanaged needs --requested-by APP-ID: it says that app is not managed")
        }
        if unregistered && requestedBy != nil {
            throw ValidationError("--unregistered and --requested-by exclude each other: give one")
        }
        if pinentryFromStdin && (pinentry == nil || !pinentryOnly) {
            throw ValidationError("--pinentry-from-stdin needs --pinentry-only and --pinentry naming the program")
        }
        if let pinentry, !pinentry.hasPrefix("/") {
            throw ValidationError("--pinentry '\(pinentry)' must be an absolute path, e.g. /usr/bin/pinentry")
        }
    }

    /// The descriptor open on standard input, moved above 2 (close-on-exec), standard input
    /// becoming /dev/null.
    static func takeStandardInput() throws -> Int32 {
        let descriptor = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
        guard descriptor >= 0 else {
            throw CLIError("--pinentry-from-stdin: standard input is not open", hint: "cordond passes the pinentry")
        }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if null >= 0 {
            dup2(null, STDIN_FILENO)
            close(null)
        }
        return descriptor
    }

    /// Who the prompt says asked.
    var requester: PasscodeRequest.Requester? {
        if unregistered { return .unregistered }
        return requestedBy.map { unmanaged ? .unmanagedApp($0) : .app($0) }
    }

    func run() async throws {
        let reader =
            pinentryOnly
            ? PasscodeReader(
                fromStandardInput: false, pinentryRequired: true, pinentryProgram: pinentry,
                pinentryDescriptor: pinentryFromStdin ? try Self.takeStandardInput() : nil)
            : PasscodeReader(
                fromStandardInput: passcode.passcodeStdin, pinentryAllowed: !passcode.noPinentry,
                pinentryProgram: pinentry)
        if pinentryOnly { try reader.checkAvailable() }
        let client = try await global.connect()
        defer { reader.finish() }
        do {
            if fingerprint {
                try await unlockWithFingerprint(client)
            } else {
                try await client.unlock(passcode: nil)
            }
        } catch CordonError.passcodeRequired {
            var error: String?
            for attempt in 1...Self.maxTries {
                let secret = try reader.read(.unlock(error: error, requester: requester))
                do {
                    try await client.unlock(passcode: secret)
                    break
                } catch CordonError.wrongPasscode(let attemptsLeft, let retryAfter, _, let hardwareLeft, _)
                    where reader.usesPinentry && attemptsLeft > 0 && retryAfter <= 0 && attempt < Self.maxTries
                {
                    // The tighter limit, named when it is the TPM's.
                    let limit = hardwareLeft == nil ? "" : " before the TPM locks out"
                    error = "Wrong passcode, \(Format.count(attemptsLeft, "attempt")) left\(limit)."
                }
            }
        }
        reader.finish()
        await client.close()
        try Output.line("unlocked")
    }

    /// Scans a finger; when fingerprint unlock cannot be used now (or the finger does not match),
    /// says why on stderr and falls back to the passcode.
    func unlockWithFingerprint(_ client: CordonClient) async throws {
        Output.note("touch the fingerprint reader")
        do {
            try await client.unlockWithFingerprint()
        } catch let error as CordonError {
            switch error {
            case .biometricsDisabled, .biometricsNotEnabled, .biometricsPasscodeNeeded, .biometricsUnavailable,
                .wrongPasscode:
                Output.note("fingerprint: \(CLIError(error).message); unlock with the passcode")
                throw CordonError.passcodeRequired
            default: throw error
            }
        }
    }
}
