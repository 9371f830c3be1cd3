import CordonProtocol
import Foundation

extension CordonClient {
    /// The policy in force: its version, every source (applied or rejected, with its problems),
    /// the directories read and the number of trusted keys.
    ///
    /// ```swift
    /// let status = try await client.policyStatus()
    /// print(status.version, status.sources.filter { !$0.isApplied }.map(\.path))
    /// ```
    public func policyStatus() async throws -> PolicyStatus {
        try await connection.call(.getPolicyStatus, NoParameters(), returning: PolicyStatusReply.self).status
    }

    /// Every setting of the effective policy, with the rules its value came from.
    ///
    /// ```swift
    /// for setting in try await client.effectivePolicy().settings {
    ///     print(setting.path, setting.value, setting.rules)
    /// }
    /// ```
    public func effectivePolicy() async throws -> CordonEffectivePolicy {
        try await connection.call(.getEffectivePolicy, NoParameters(), returning: EffectivePolicyReply.self)
    }

    /// Asks the agent to validate `document` as an admin file (or, with `user`, as a user file,
    /// which may only tighten); `path` names it in the problems.
    ///
    /// ```swift
    /// let result = try await client.validatePolicy(document: text, path: "10-base.json")
    /// result.problems.forEach { print($0) }
    /// ```
    public func validatePolicy(document: String, path: String? = nil, user: Bool = false) async throws
        -> PolicyValidation
    {
        let reply = try await connection.call(
            .validatePolicy, ValidateParameters(document: document, path: path, user: user),
            returning: ValidateReply.self)
        return PolicyValidation(
            valid: reply.valid,
            problems: reply.problems.map {
                PolicyProblem(path: $0.path, pointer: $0.pointer, line: $0.line, column: $0.column, message: $0.message)
            })
    }

    /// The decision for `appId` doing `action`, and the chain of settings and files behind it.
    /// `context` may hold `contentType` and `length` (as a string).
    ///
    /// ```swift
    /// let why = try await client.explain(
    ///     appId: "com.example.notes", action: .documentSend, target: "com.example.mail",
    ///     context: ["contentType": "application/pdf"])
    /// print(why.decision.allowed, why.decision.reason)
    /// ```
    /// Throws `CordonError.unknownAction` when the agent does not decide `action`.
    public func explain(
        appId: String, action: PolicyAction, target: String? = nil, context: [String: String] = [:]
    ) async throws -> CordonPolicyExplanation {
        let reply = try await connection.call(
            .explainPolicy,
            ExplainParameters(
                appId: appId, action: action.rawValue, target: target, context: PolicyContext.wire(context)),
            returning: ExplainReply.self)
        return CordonPolicyExplanation(
            decision: reply.decision,
            steps: reply.steps.map { step in
                PolicyExplanationStep(
                    setting: step.setting, value: step.value,
                    candidates: step.candidates.map { PolicyCandidate(rule: $0.rule, value: $0.value, won: $0.won) })
            })
    }

    /// Re-reads every policy directory now and returns the resulting status. (The agent also
    /// watches the directories and reloads by itself.)
    ///
    /// ```swift
    /// let status = try await client.reloadPolicy()
    /// ```
    public func reloadPolicy() async throws -> PolicyStatus {
        try await connection.call(.reloadPolicy, NoParameters(), returning: PolicyStatusReply.self).status
    }

    /// Asks the policy whether this unregistered client (an unmanaged tool, such as the CLI) may
    /// do `action`. `context` may hold `contentType` and `length` (as a string).
    ///
    /// ```swift
    /// let decision = try await client.check(action: .pasteboardPaste, target: "com.example.notes")
    /// if !decision.allowed { print("denied:", decision.reason) }
    /// ```
    /// A registered app asks with `CordonApp.check(_:target:contentType:length:)` instead.
    /// Throws `CordonError.unknownAction` for `appRegister` and for actions the agent does not know.
    public func check(action: PolicyAction, target: String? = nil, context: [String: String] = [:])
        async throws -> CordonDecision
    {
        let reply = try await connection.call(
            .check, CheckParameters(action: action.rawValue, target: target, context: PolicyContext.wire(context)),
            returning: CheckReply.self)
        return reply.decision
    }
}
