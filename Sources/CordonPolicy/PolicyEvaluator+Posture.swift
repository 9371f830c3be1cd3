import CordonProtocol

/// One posture check that an app's `conditions` act on.
public struct PostureFinding: Sendable, Equatable {
    /// The check's result, as read.
    public var result: PostureResult
    /// What the app's policy does about it (never `ignore`).
    public var action: PostureAction
    /// The rules that set the action (and `postureUnknown`, for an unknown result).
    public var rules: [RuleReference]

    /// `conditions.secureBoot is "block" and SecureBoot EFI variable: 0`.
    public var reason: String {
        let status = result.status == .unknown ? " (unknown counts as fail)" : ""
        return "conditions.\(result.check.rawValue) is \(action.policyDescription) and \(result.evidence)\(status)"
    }
}

/// What a posture reading means for one app: each failing check its policy acts on.
public struct PostureVerdict: Sendable, Equatable {
    /// Failing checks with an action other than `ignore`, in `PostureCheck` order.
    public var findings: [PostureFinding]

    /// The strictest action among the findings; `ignore` when there is none.
    public var action: PostureAction {
        findings.map(\.action).max { $0.strictness < $1.strictness } ?? .ignore
    }

    /// The first finding with the strictest action: the one a refusal names.
    public var deciding: PostureFinding? { findings.first { $0.action == action } }

    /// The findings that only warn.
    public var warnings: [PostureFinding] { findings.filter { $0.action == .warn } }
}

extension PolicyEvaluator {
    /// Whether `appId`'s policy acts on any posture check: when every `conditions.<check>` is
    /// `ignore`, nothing a reading says changes its registration, so none is waited for.
    public func actsOnPosture(appId: String) -> Bool {
        let settings = policy.forApp(appId)
        return PostureCheck.allCases.contains { settings[PolicyKeys.Conditions.setting(for: $0)].value != .ignore }
    }

    /// What `checks` mean for `appId` (docs/ARCHITECTURE.md, "Posture"): a check acts when it
    /// fails, or is unknown and `conditions.postureUnknown` is `fail`; its action is the app's
    /// `conditions.<check>` (overrides tighten it per app).
    public func posture(appId: String, checks: [PostureResult]) -> PostureVerdict {
        let settings = policy.forApp(appId)
        let unknown = settings[PolicyKeys.Conditions.postureUnknown]
        var findings: [PostureFinding] = []
        for result in checks {
            let setting = settings[PolicyKeys.Conditions.setting(for: result.check)]
            guard setting.value != .ignore else { continue }
            switch result.status {
            case .pass:
                continue
            case .fail:
                findings.append(PostureFinding(result: result, action: setting.value, rules: setting.rules))
            case .unknown:
                guard unknown.value == .fail else { continue }
                let rules = PolicyFormat.sortedUnion(setting.rules, unknown.rules, by: <)
                findings.append(PostureFinding(result: result, action: setting.value, rules: rules))
            }
        }
        return PostureVerdict(findings: findings)
    }
}
