/// What a new passcode must satisfy (`passcode` section of the policy).
public struct PasscodeRules: Sendable, Equatable {
    public var minLength: Int
    /// Require at least one letter and one digit.
    public var requireAlphanumeric: Bool
    /// Allow simple passcodes: one repeated character, or a straight run such as 1234 or dcba.
    public var allowSimple: Bool
    /// Allow a passcode that is a shorter unit repeated (121212, abcabc).
    public var allowRepeating: Bool
    /// Why the rules are stricter than the policy's own (said in the refusal), if they are.
    public var reason: String?

    public init(
        minLength: Int = 4, requireAlphanumeric: Bool = false, allowSimple: Bool = true, allowRepeating: Bool = true,
        reason: String? = nil
    ) {
        self.minLength = minLength
        self.requireAlphanumeric = requireAlphanumeric
        self.allowSimple = allowSimple
        self.allowRepeating = allowRepeating
        self.reason = reason
    }

    /// The shortest passcode by default when no TPM protects the key (Intune's device default).
    public static let softwareOnlyMinLength = 6

    /// These rules where only the passcode (scrypt) protects the key (docs/THREAT-MODEL.md, "Passcode
    /// and TPM"): a copy of the database can be attacked offline, so by default a passcode has at least
    /// 6 characters and is neither a simple sequence nor a repeating pattern. What the policy itself
    /// sets (`minLengthSet`, `allowSimpleSet`: a policy file names the setting) stands.
    public func hardenedForSoftwareOnly(minLengthSet: Bool, allowSimpleSet: Bool) -> PasscodeRules {
        var rules = self
        let reason = "no TPM protects the key"
        if !minLengthSet && rules.minLength < Self.softwareOnlyMinLength {
            rules.minLength = Self.softwareOnlyMinLength
            rules.reason = reason
        }
        if !allowSimpleSet && (rules.allowSimple || rules.allowRepeating) {
            rules.allowSimple = false
            rules.allowRepeating = false
            rules.reason = reason
        }
        return rules
    }

    /// Why `passcode` is not acceptable, or nil when it is. Never includes the passcode itself.
    public func problem(with passcode: String) -> String? {
        let because = reason.map { " (\($0))" } ?? ""
        if passcode.count < minLength {
            return "the passcode must have at least \(minLength) characters\(because)"
        }
        if requireAlphanumeric {
            let hasLetter = passcode.unicodeScalars.contains { $0.properties.isAlphabetic }
            let hasDigit = passcode.unicodeScalars.contains { ("0"..."9").contains($0) }
            if !(hasLetter && hasDigit) { return "the passcode must contain letters and digits" }
        }
        if !allowSimple && Self.isSimple(passcode) {
            return "the passcode is too simple (a repeated character or a straight sequence)\(because)"
        }
        if !allowRepeating && Self.isRepeating(passcode) {
            return "the passcode is a repeating pattern (a shorter part repeated, as in 121212)\(because)"
        }
        return nil
    }

    /// One repeated character, or every step +1 or every step -1 (1234, 9876, abcd).
    static func isSimple(_ passcode: String) -> Bool {
        let values = passcode.lowercased().unicodeScalars.map { Int($0.value) }
        guard values.count > 1 else { return true }
        let steps = zip(values.dropFirst(), values).map { $0 - $1 }
        return steps.allSatisfy { $0 == 0 } || steps.allSatisfy { $0 == 1 } || steps.allSatisfy { $0 == -1 }
    }

    /// A shorter unit repeated to fill the whole passcode (1212, abcabc, 258258).
    static func isRepeating(_ passcode: String) -> Bool {
        let values = Array(passcode.lowercased().unicodeScalars)
        guard values.count > 1 else { return true }
        return (1...(values.count / 2)).contains { period in
            values.count % period == 0
                && values.indices.dropFirst(period).allSatisfy { values[$0] == values[$0 - period] }
        }
    }
}
