import CordonProtocol
import Foundation

/// The policy in force: its version, when it was applied, every source and the directories read.
///
/// ```swift
/// let status = try await client.policyStatus()
/// for source in status.sources where !source.isApplied { print(source.path, source.problems) }
/// ```
/// Encodes as the wire `Status` (`appliedAt` in Unix seconds).
public struct PolicyStatus: Sendable, Equatable, Codable {
    /// The version (a hash) of the policy in force; `PolicyDidChange` events carry it.
    public var version: String
    /// When the policy in force was applied.
    public var appliedAt: Date
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

    /// Creates a status.
    public init(
        version: String, appliedAt: Date, sources: [PolicySourceStatus], adminDirectory: String,
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

    init(_ wire: PolicyStatusReply) {
        self.init(
            version: wire.version, appliedAt: Date(timeIntervalSince1970: wire.appliedAt),
            sources: wire.sources.map(PolicySourceStatus.init), adminDirectory: wire.adminDirectory,
            userDirectory: wire.userDirectory, trustDirectory: wire.trustDirectory, trustedKeys: wire.trustedKeys)
    }

    /// The wire form.
    var wire: PolicyStatusReply {
        PolicyStatusReply(
            version: version, appliedAt: appliedAt.timeIntervalSince1970,
            sources: sources.map {
                WirePolicySource(
                    path: $0.path, origin: $0.origin, status: $0.status, problems: $0.problems, signedBy: $0.signedBy)
            },
            adminDirectory: adminDirectory, userDirectory: userDirectory, trustDirectory: trustDirectory,
            trustedKeys: trustedKeys)
    }

    /// Decodes the wire `Status`.
    public init(from decoder: any Decoder) throws {
        self.init(try PolicyStatusReply(from: decoder))
    }

    /// Encodes as the wire `Status`.
    public func encode(to encoder: any Encoder) throws {
        try wire.encode(to: encoder)
    }
}

/// One policy source as the agent sees it: the built-in default, or an admin or user file.
public struct PolicySourceStatus: Sendable, Equatable, Codable {
    /// The file path, or `<builtin>` for the embedded default.
    public var path: String
    /// `builtin`, `admin` or `user`.
    public var origin: String
    /// `applied` or `rejected`.
    public var status: String
    /// For a rejected file: why (parse, validation or signature problems).
    public var problems: [String]
    /// For a signed admin file: the signing key's id.
    public var signedBy: String?

    /// Creates a source status.
    public init(path: String, origin: String, status: String, problems: [String] = [], signedBy: String? = nil) {
        self.path = path
        self.origin = origin
        self.status = status
        self.problems = problems
        self.signedBy = signedBy
    }

    init(_ wire: WirePolicySource) {
        self.init(
            path: wire.path, origin: wire.origin, status: wire.status, problems: wire.problems,
            signedBy: wire.signedBy)
    }

    /// Whether the source is part of the policy in force.
    public var isApplied: Bool { status == "applied" }
}

/// The effective policy: every resolved setting with the rules its value came from.
///
/// ```swift
/// let policy = try await client.effectivePolicy()
/// let copyOut = policy.settings.first { $0.path == "/pasteboard/copyOut" }
/// ```
public struct EffectivePolicy: Sendable, Equatable, Codable {
    /// The version (a hash) of the policy in force.
    public var version: String
    /// Every setting, e.g. `/pasteboard/copyOut`.
    public var settings: [PolicySetting]

    /// Creates an effective policy.
    public init(version: String, settings: [PolicySetting]) {
        self.version = version
        self.settings = settings
    }
}

/// One resolved setting of the effective policy.
public struct PolicySetting: Sendable, Equatable, Codable {
    /// The setting's JSON pointer, e.g. `/pasteboard/copyOut`.
    public var path: String
    /// The value in force, as text.
    public var value: String
    /// The rules whose value won, as `FILE#POINTER`.
    public var rules: [String]

    /// Creates a setting.
    public init(path: String, value: String, rules: [String]) {
        self.path = path
        self.value = value
        self.rules = rules
    }
}

/// The outcome of validating a policy document.
public struct PolicyValidation: Sendable, Equatable, Codable {
    /// Whether the document parses, validates and would be accepted.
    public var valid: Bool
    /// Every problem found.
    public var problems: [PolicyProblem]

    /// Creates a validation outcome.
    public init(valid: Bool, problems: [PolicyProblem]) {
        self.valid = valid
        self.problems = problems
    }
}

/// One problem in a policy document: the file, the JSON pointer, the position and what is wrong.
public struct PolicyProblem: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The file (or the name given to `validatePolicy`).
    public var path: String
    /// The JSON pointer of the offending value (empty for the whole document).
    public var pointer: String
    /// The 1-based line, when known.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?
    /// What is wrong and what was expected.
    public var message: String

    /// Creates a problem.
    public init(path: String, pointer: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.path = path
        self.pointer = pointer
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: POINTER: MESSAGE` (position parts omitted when unknown).
    public var description: String {
        var location = path
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): \(pointer.isEmpty ? "/" : pointer): \(message)"
    }
}

/// Why a decision fell: the decision, then each consulted setting with every file's value.
///
/// ```swift
/// let why = try await client.explain(appId: "com.example.notes", action: .pasteboardCopy)
/// for step in why.steps { print(step.setting, step.value, step.candidates.filter(\.won).map(\.rule)) }
/// ```
public struct PolicyExplanation: Sendable, Equatable, Codable {
    /// The decision the policy makes.
    public var decision: CordonDecision
    /// The settings consulted, in order.
    public var steps: [PolicyExplanationStep]

    /// Creates an explanation.
    public init(decision: CordonDecision, steps: [PolicyExplanationStep]) {
        self.decision = decision
        self.steps = steps
    }
}

/// One consulted setting: its resolved value and each file's value for it.
public struct PolicyExplanationStep: Sendable, Equatable, Codable {
    /// The setting, e.g. `/pasteboard/copyOut`.
    public var setting: String
    /// The resolved value.
    public var value: String
    /// Every source's value; the winners have `won` set.
    public var candidates: [PolicyCandidate]

    /// Creates a step.
    public init(setting: String, value: String, candidates: [PolicyCandidate]) {
        self.setting = setting
        self.value = value
        self.candidates = candidates
    }
}

/// One file's value for a setting.
public struct PolicyCandidate: Sendable, Equatable, Codable {
    /// The rule, as `FILE#POINTER`.
    public var rule: String
    /// The value that file gives.
    public var value: String
    /// Whether this value is (one of) the most restrictive, and so in force.
    public var won: Bool

    /// Creates a candidate.
    public init(rule: String, value: String, won: Bool) {
        self.rule = rule
        self.value = value
        self.won = won
    }
}
