/// Why a passcode prompt failed, as the user is told: what went wrong, what to do, and whether
/// the command line is at fault or the user cancelled (the CLI's exit code follows from it).
public struct PromptFailure: Error, Equatable, Sendable {
    /// What went wrong.
    public let message: String
    /// What to do about it.
    public let hint: String
    public let kind: Kind

    /// Whose doing the failure is.
    public enum Kind: Sendable {
        /// The system or the program: try again.
        case failure
        /// The command line or the input given.
        case usage
        /// The user cancelled the prompt.
        case cancelled
    }

    public init(_ message: String, hint: String, kind: Kind = .failure) {
        self.message = message
        self.hint = hint
        self.kind = kind
    }
}
