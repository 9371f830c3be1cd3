import ArgumentParser
import CordonProtocol

/// The exit codes of `cordon`, stable for scripts (documented in docs/CLI.md and `cordon --help`).
enum CLIExitCode: Int32, Sendable, CaseIterable {
    /// The command did what was asked.
    case success = 0
    /// Anything not covered below (including `cordon doctor` finding a problem, `cordon policy check`
    /// denied, `cordon policy validate` finding an invalid file).
    case failure = 1
    /// The command line was wrong, or a passcode is needed and there is no pinentry or terminal to ask on.
    case usage = 2
    /// cordond could not be reached, or the connection to it closed.
    case agentUnavailable = 3
    /// Wrong passcode, throttled (retry later), passcode required, or another check is in progress.
    case passcode = 4
    /// The container is not initialized, or already is.
    case initialization = 5
    /// The container is locked, or no key is available.
    case locked = 6
    /// The new passcode does not meet the passcode rules.
    case invalidPasscode = 7
    /// The user cancelled the passcode prompt (pinentry's Cancel).
    case cancelled = 8

    /// The code for an error's declared exit.
    init(_ exit: ErrorText.Exit) {
        switch exit {
        case .failure: self = .failure
        case .usage: self = .usage
        case .passcode: self = .passcode
        case .initialization: self = .initialization
        case .locked: self = .locked
        case .invalidPasscode: self = .invalidPasscode
        case .cancelled: self = .cancelled
        }
    }

    /// The ArgumentParser exit code.
    var exitCode: ExitCode { ExitCode(rawValue) }

    /// One line per code, for help texts.
    static var summary: String {
        """
        0  success
        1  failure (anything else; `doctor` found a problem; a policy denied or invalid)
        2  usage error (bad arguments, `wipe` without --yes, no pinentry or terminal, unknown action)
        3  cordond unavailable (not running, wrong socket, connection lost)
        4  wrong passcode, retry later, passcode required, or busy
        5  not initialized, or already initialized
        6  locked, or no key available
        7  invalid passcode (does not meet the passcode rules)
        8  cancelled (the passcode prompt was cancelled)
        """
    }
}
