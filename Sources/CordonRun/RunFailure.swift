/// Why `cordon run` cannot go on, in the user's terms: what went wrong and what to do about it
/// (the CLI prints both and exits with the code `kind` names).
public struct RunFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Whether the command line (or the environment it names) is at fault, or something else.
    public enum Kind: Sendable, Equatable {
        /// The command line was wrong (the CLI's usage exit code).
        case usage
        /// Anything else (the CLI's failure exit code).
        case failure
    }

    /// What went wrong.
    public var message: String
    /// What to do about it.
    public var hint: String
    /// Whose fault it is.
    public var kind: Kind

    /// A failure with its message, hint and kind.
    public init(_ message: String, hint: String, kind: Kind = .failure) {
        self.message = message
        self.hint = hint
        self.kind = kind
    }

    /// The message.
    public var description: String { message }
}
