import CordonFleet

/// Why an admin's fleet operation was refused or failed: what went wrong (naming the file or
/// field), what to do about it, and a stable kind for scripts and tests.
public struct FleetAdminError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, CaseIterable {
        /// A bad argument: a device id, a duration, a role name, a threshold.
        case usage
        /// The workspace is missing, not a fleet workspace, or already one (`init`).
        case workspace
        /// A key file is missing, unreadable, malformed, of another role, or not one this repository trusts.
        case key
        /// Fewer keys than a threshold asks (root signatures, the wipe threshold).
        case threshold
        /// A policy file or directory that cannot be published as it is.
        case policy
        /// A file could not be read or written.
        case io
        /// The repository's own files are inconsistent (edited by hand, half-copied).
        case repository
    }

    public var kind: Kind
    /// What went wrong, naming the file or field.
    public var message: String
    /// What to do about it.
    public var hint: String

    /// An error of `kind`.
    public init(_ kind: Kind, _ message: String, hint: String) {
        self.kind = kind
        self.message = message
        self.hint = hint
    }

    public var description: String { "\(message) (hint: \(hint))" }

    /// A metadata error from CordonFleet, for the file it came from.
    static func metadata(_ error: TUFError, file: String) -> FleetAdminError {
        FleetAdminError(
            .repository, "\(file): \(error)",
            hint: "the repository's files were changed outside `cordon fleet`; restore them from a backup")
    }
}
