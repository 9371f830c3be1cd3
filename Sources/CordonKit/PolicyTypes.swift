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
public typealias EffectivePolicy = EffectivePolicyReply

/// One resolved setting of the effective policy: its JSON pointer, value and winning rules.
public typealias PolicySetting = WireSetting

/// The outcome of validating a policy document: `valid` and every problem.
public typealias PolicyValidation = ValidateReply

/// One problem in a policy document: the file, the JSON pointer, the position and what is wrong.
public typealias PolicyProblem = WireProblem

extension WireProblem: CustomStringConvertible {
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
public typealias PolicyExplanationStep = WireExplanationStep

/// One file's value for a setting; the winners have `won` set.
public typealias PolicyCandidate = WireCandidate
