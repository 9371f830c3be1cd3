/// Why a repository's metadata or a target was refused (docs/ARCHITECTURE.md, "Fleet"): the kind is
/// stable (the TUF attack it answers), the role names which file, the detail says what differed.
public struct TUFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, one name per check of the TUF client workflow.
    public enum Kind: String, Sendable, CaseIterable {
        /// Fewer distinct keys of the delegating role signed than its threshold asks.
        case threshold
        /// The metadata's expiry is past (a freeze attack, or an admin who stopped re-signing).
        case expired
        /// A version lower than one already trusted (a rollback attack).
        case rollback
        /// The version differs from the one the referring role or the file name promised (mix and match).
        case versionMismatch
        /// More or fewer bytes than promised, or more than the cap for that file (endless data).
        case length
        /// The bytes' hash differs from the one promised.
        case hash
        /// Not TUF metadata of the expected type, or a field missing or of the wrong kind.
        case malformed
        /// A file the repository must serve is not there.
        case notFound
        /// The transport failed (the repository could not be reached); nothing was learned.
        case transport
    }

    /// The check that failed.
    public var kind: Kind
    /// The role (`root`, `timestamp`, `snapshot`, `targets`, a delegated role) or `target`.
    public var role: String
    /// What differed, for a person: versions, key counts, the JSON pointer of a bad field.
    public var detail: String

    /// An error of `kind` for `role`.
    public init(_ kind: Kind, role: String, _ detail: String) {
        self.kind = kind
        self.role = role
        self.detail = detail
    }

    public var description: String { "\(role): \(kind.rawValue): \(detail)" }
}
