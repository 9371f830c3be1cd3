/// What a new passcode must satisfy (`passcode` section of the policy).
public struct PasscodeRules: Sendable, Equatable {
    public var minLength: Int
    /// Require at least one letter and one digit.
    public var requireAlphanumeric: Bool
    /// Allow simple passcodes: one repeated character, or a straight run such as 1234 or dcba.
    public var allowSimple: Bool

    public init(minLength: Int = 4, requireAlphanumeric: Bool = false, allowSimple: Bool = true) {
        self.minLength = minLength
        self.requireAlphanumeric = requireAlphanumeric
        self.allowSimple = allowSimple
    }

    /// Why `passcode` is not acceptable, or nil when it is. Never includes the passcode itself.
    public func problem(with passcode: String) -> String? {
        if passcode.count < minLength {
            return "the passcode must have at least \(minLength) characters"
        }
        if requireAlphanumeric {
            let hasLetter = passcode.unicodeScalars.contains { $0.properties.isAlphabetic }
            let hasDigit = passcode.unicodeScalars.contains { ("0"..."9").contains($0) }
            if !(hasLetter && hasDigit) { return "the passcode must contain letters and digits" }
        }
        if !allowSimple && Self.isSimple(passcode) {
            return "the passcode is too simple (a repeated character or a straight sequence)"
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
}
