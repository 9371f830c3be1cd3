/// What the user is told about an error: what went wrong, what to do, and how the CLI exits.
public struct ErrorText: Sendable, Equatable {
    /// How the CLI exits for an error (docs/CLI.md lists the codes).
    public enum Exit: Sendable, Equatable, CaseIterable {
        case failure
        case usage
        case passcode
        case initialization
        case locked
        case invalidPasscode
        case cancelled
    }

    /// What went wrong, printed after `cordon: error: `.
    public let message: String
    /// What to do about it, printed after `hint: `.
    public let hint: String
    /// How the CLI exits.
    public let exit: Exit

    /// A message, its hint and its exit.
    public init(_ message: String, hint: String, exit: Exit = .failure) {
        self.message = message
        self.hint = hint
        self.exit = exit
    }

    /// The hint of every error that needs the container unlocked.
    public static let unlockHint = "unlock first: `cordon unlock`"

    /// The hint of an error that needs the container unlocked, in `state` (a protocol name): a
    /// container not set up needs `cordon init` first.
    public static func lockedHint(state: String) -> String {
        state == LifecycleState.uninitialized.rawValue ? "set a passcode first: `cordon init`" : unlockHint
    }

    /// The passcode-throttling hint: how long to wait.
    public static func waitHint(_ seconds: Double) -> String {
        guard seconds > 0 else { return "try again" }
        return "wait \(Self.seconds(seconds)), then try again"
    }

    /// `1 attempt`, `3 attempts`.
    public static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }

    /// Whole seconds, rounded up: `1 second`, `4 seconds`.
    public static func seconds(_ value: Double) -> String {
        count(Int(value.rounded(.up)), "second")
    }
}

/// A failure the CLI's libraries (`cordon run`'s CordonRun, the prompt's CordonPrompt) throw: the
/// text the user is told, as is.
extension ErrorText: Error {}
