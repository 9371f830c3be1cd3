import Foundation

/// One audit record: a policy decision, an enforcement step, or a policy change. The agent
/// writes it to its SQLite log, sends it on the wire (`io.cordon.Audit`) and the SDK and CLI
/// read it: one type for all of them.
///
/// ```swift
/// for entry in try await client.audit(limit: 100) where entry.outcome == "deny" {
///     print(entry.date, entry.appId ?? "-", entry.reason)
/// }
/// ```
public struct AuditEntry: Sendable, Codable, Equatable, Identifiable {
    /// The record's id; ids grow with time (0 before it is stored).
    public var id: Int
    /// When it was written, in Unix seconds (as on the wire); ``date`` is the same as a `Date`.
    public var time: Double
    /// What kind of record.
    public var category: AuditCategory
    /// The app concerned, if any.
    public var appId: String?
    /// The action, e.g. `pasteboard.copy`, `ack.freeze`, `policy.apply`, if any.
    public var action: String?
    /// The outcome, e.g. `allow` or `deny` for a decision, `applied` or `rejected` for a policy file.
    public var outcome: String
    /// A sentence saying why.
    public var reason: String
    /// The deciding rules, as `FILE#POINTER` (for a policy change, the files in force).
    public var rules: [String]
    /// Set when the agent that wrote it ran in test mode (admin inputs from flags; nothing it
    /// recorded is what an administrator decided). Absent otherwise.
    public var testMode: Bool?

    /// A record (`id` 0 until it is stored).
    public init(
        id: Int = 0, time: Double, category: AuditCategory, appId: String? = nil, action: String? = nil,
        outcome: String, reason: String, rules: [String] = [], testMode: Bool? = nil
    ) {
        self.testMode = testMode
        self.id = id
        self.time = time
        self.category = category
        self.appId = appId
        self.action = action
        self.outcome = outcome
        self.reason = reason
        self.rules = rules
    }

    /// When it was written.
    public var date: Date { Date(timeIntervalSince1970: time) }
}

/// The kind of an audit record: a typed name, open to kinds a newer agent adds (an older reader
/// keeps them as they are rather than failing or guessing).
public struct AuditCategory: RawRepresentable, Sendable, Codable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// A category by name: `"policy"`.
    public init(stringLiteral value: String) { rawValue = value }

    /// A policy decision (every deny; allows when configured) or a registration's outcome.
    public static let decision = AuditCategory(rawValue: "decision")
    /// What enforcement did to an app that missed its deadline, or to an orphaned wrapped program.
    public static let enforcement = AuditCategory(rawValue: "enforcement")
    /// A policy file rejected, or a new policy applied.
    public static let policy = AuditCategory(rawValue: "policy")

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
