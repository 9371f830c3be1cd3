import Foundation

/// The policy in force: its version, when it was applied, every source and the directories read
/// (`io.cordon.Policy.GetStatus` and `Reload`; the agent, SDK and CLI share this type).
///
/// ```swift
/// let status = try await client.policyStatus()
/// for source in status.sources where !source.isApplied { print(source.path, source.problems) }
/// ```
public struct PolicyStatus: Sendable, Codable, Equatable {
    /// The version (a hash) of the policy in force; `PolicyDidChange` events carry it.
    public var version: String
    /// When the policy in force was applied, in Unix seconds (as on the wire); see ``appliedDate``.
    public var appliedAt: Double
    /// The built-in default, then every admin and user file, applied or rejected.
    public var sources: [PolicySourceStatus]
    /// Where admin files are read (`/etc/cordon/policy.d`).
    public var adminDirectory: String
    /// Where user files are read (`$XDG_CONFIG_HOME/cordon/policy.d`).
    public var userDirectory: String
    /// Where trusted public keys are read (`/etc/cordon/trust`).
    public var trustDirectory: String
    /// How many public keys are trusted; when any is, admin files must be signed.
    public var trustedKeys: Int

    /// A status.
    public init(
        version: String, appliedAt: Double, sources: [PolicySourceStatus], adminDirectory: String,
        userDirectory: String, trustDirectory: String, trustedKeys: Int
    ) {
        self.version = version
        self.appliedAt = appliedAt
        self.sources = sources
        self.adminDirectory = adminDirectory
        self.userDirectory = userDirectory
        self.trustDirectory = trustDirectory
        self.trustedKeys = trustedKeys
    }

    /// When the policy in force was applied.
    public var appliedDate: Date { Date(timeIntervalSince1970: appliedAt) }
}

/// The `(status: Status)` reply of `io.cordon.Policy.GetStatus` and `Reload`.
public struct PolicyStatusReply: Sendable, Codable, Equatable {
    public var status: PolicyStatus

    public init(status: PolicyStatus) { self.status = status }
}

/// One policy source as the agent sees it: the built-in default, or an admin or user file.
public struct PolicySourceStatus: Sendable, Codable, Equatable {
    /// The file path, or `<builtin>` for the embedded default.
    public var path: String
    /// Who wrote it.
    public var origin: PolicyOrigin
    /// Whether it is in force.
    public var status: PolicySourceState
    /// For a rejected file: why (parse, validation or signature problems).
    public var problems: [String]
    /// For a signed admin file: the signing key's id.
    public var signedBy: String?

    /// A source status.
    public init(
        path: String, origin: PolicyOrigin, status: PolicySourceState, problems: [String] = [], signedBy: String? = nil
    ) {
        self.path = path
        self.origin = origin
        self.status = status
        self.problems = problems
        self.signedBy = signedBy
    }

    /// Whether the source is part of the policy in force.
    public var isApplied: Bool { status == .applied }
}

/// Who wrote a policy source. Admin and user files merge, most restrictive wins; the built-in
/// default fills the keys no file sets.
public enum PolicyOrigin: String, Sendable, Hashable, CaseIterable, Codable {
    case builtin, admin, user
}

/// What became of a policy source.
public enum PolicySourceState: String, Sendable, Hashable, CaseIterable, Codable {
    /// In force.
    case applied
    /// Rejected; it never was in force.
    case rejected
    /// Rejected; the version accepted before stays in force.
    case rejectedLastGoodInForce = "rejected (last good version in force)"
}
