import CordonProtocol
import Foundation

/// The effective policy: every resolved setting with the rules its value came from.
///
/// ```swift
/// let policy = try await client.effectivePolicy()
/// let copyOut = policy.settings.first { $0.path == "/pasteboard/copyOut" }
/// ```
public typealias CordonEffectivePolicy = EffectivePolicyReply

/// One resolved setting of the effective policy: its JSON pointer, value and winning rules.
public typealias CordonPolicySetting = WireSetting

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
public struct CordonPolicyExplanation: Sendable, Equatable, Codable {
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
