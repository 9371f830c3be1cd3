import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets

/// Stronger default passcode rules where only the passcode protects the key (docs/THREAT-MODEL.md,
/// "Passcode and TPM"): without a TPM a copy of the database can be attacked offline, so unless a
/// policy file sets `passcode.minLength` / `passcode.allowSimple` itself, a passcode needs 6
/// characters and may be neither a simple sequence nor a repeating pattern (as Intune's defaults).
///
/// Whether a TPM seals the key is known only once the key is wrapped, on the store pool: so the
/// work that wraps (`Initialize`, `ChangePasscode`, `Recover`) checks `SoftwareOnlyRules` against
/// what it made, before storing anything.
extension KeyVault {
    /// The passcode rules the policy dictates.
    var passcodeRules: PasscodeRules {
        let policy = host.policy.policy
        return PasscodeRules(
            minLength: max(policy[PolicyKeys.Passcode.minLength].value, 1),
            requireAlphanumeric: policy[PolicyKeys.Passcode.kind].value == .alphanumeric,
            allowSimple: policy[PolicyKeys.Passcode.allowSimple].value)
    }

    /// The rules a passcode must meet when the key it wraps is protected by software only.
    var softwareOnlyRules: SoftwareOnlyRules {
        guard host.configuration.softwareOnlyPasscodeDefaults else { return SoftwareOnlyRules(rules: passcodeRules) }
        let policy = host.policy.policy
        return SoftwareOnlyRules(
            rules: passcodeRules.hardenedForSoftwareOnly(
                minLengthSet: Self.setByAFile(policy[PolicyKeys.Passcode.minLength].candidates),
                allowSimpleSet: Self.setByAFile(policy[PolicyKeys.Passcode.allowSimple].candidates)))
    }

    /// Whether a policy file (not the built-in default) names the setting.
    static func setByAFile<Value>(_ candidates: [SettingCandidate<Value>]) -> Bool {
        candidates.contains { $0.rule.source.origin != .builtin }
    }
}

/// The hardened rules, carried to the store pool with the work that wraps the key.
struct SoftwareOnlyRules: Sendable {
    let rules: PasscodeRules

    /// The refusal for `passcode` when `wrapped` is protected by software only, or nil.
    func problem(with passcode: String, wrapped: WrappedKey) -> CordonError? {
        guard wrapped.protection == .software, let problem = rules.problem(with: passcode) else { return nil }
        return .invalidPasscode(reason: problem)
    }
}
