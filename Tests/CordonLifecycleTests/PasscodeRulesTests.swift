import CordonLifecycle
import Testing

@Suite("PasscodeRules")
struct PasscodeRulesTests {
    /// Rules that refuse simple passcodes and check nothing else.
    let noSimple = PasscodeRules(minLength: 1, requireAlphanumeric: false, allowSimple: false)

    @Test func defaultsAcceptAnyFourCharacters() {
        let rules = PasscodeRules()
        #expect(rules.minLength == 4)
        #expect(!rules.requireAlphanumeric)
        #expect(rules.allowSimple)
        for passcode in ["1111", "1234", "abcd", "zq9!", "correct horse battery staple"] {
            #expect(rules.problem(with: passcode) == nil, "\(passcode)")
        }
    }

    @Test func minimumLengthCountsCharacters() {
        let rules = PasscodeRules(minLength: 6)
        for passcode in ["", "a", "12345", "abcde"] {
            #expect(rules.problem(with: passcode) == "the passcode must have at least 6 characters")
        }
        #expect(rules.problem(with: "123456") == nil)
        #expect(rules.problem(with: "1234567") == nil)
        // Characters, not bytes: five two-byte letters are still too short.
        #expect(rules.problem(with: "ééééé") != nil)
        #expect(rules.problem(with: "éééééé") == nil)
    }

    @Test func alphanumericNeedsALetterAndADigit() {
        let rules = PasscodeRules(minLength: 4, requireAlphanumeric: true)
        for passcode in ["9731", "qwerty", "!@#$%^", "abc!!!", "1234!!"] {
            #expect(rules.problem(with: passcode) == "the passcode must contain letters and digits", "\(passcode)")
        }
        for passcode in ["a1b2", "secret9", "9secret", "pass 2024!", "пароль7"] {
            #expect(rules.problem(with: passcode) == nil, "\(passcode)")
        }
    }

    @Test func lengthIsCheckedBeforeComposition() {
        let rules = PasscodeRules(minLength: 8, requireAlphanumeric: true, allowSimple: false)
        #expect(rules.problem(with: "1111") == "the passcode must have at least 8 characters")
    }

    @Test(arguments: ["1111", "1234", "4321", "abcd", "DCBA", "aaaa", "AaAa", "9876", "zyx", "11"])
    func simplePasscodesAreRefusedWhenNotAllowed(passcode: String) {
        #expect(
            noSimple.problem(with: passcode)
                == "the passcode is too simple (a repeated character or a straight sequence)")
        #expect(PasscodeRules(minLength: 1).problem(with: passcode) == nil, "allowed by default")
    }

    @Test(arguments: ["1357", "2468a", "a1b2", "1243", "abce", "1212", "12344", "aabb", "1210"])
    func otherPasscodesAreNotSimple(passcode: String) {
        #expect(noSimple.problem(with: passcode) == nil)
    }

    @Test func everyRuleCombinedAcceptsAStrongPasscode() {
        let rules = PasscodeRules(minLength: 8, requireAlphanumeric: true, allowSimple: false)
        #expect(rules.problem(with: "tr0ub4dor&3") == nil)
        #expect(rules.problem(with: "abcdefgh") == "the passcode must contain letters and digits")
    }

    @Test func messagesNeverContainThePasscode() {
        let rules = PasscodeRules(minLength: 10, requireAlphanumeric: true, allowSimple: false)
        let refused = [
            "Zq7#short",  // too short
            "XYZZYPLUGH!!",  // no digit
            "90817263544",  // no letter
            "abcdefghijklmnopqrstuvwxyz0",  // accepted: the 0 breaks the run
            "Qqqqqqqqqqq",  // no digit
        ]
        var problems = 0
        for passcode in refused {
            guard let message = rules.problem(with: passcode) else { continue }
            problems += 1
            #expect(!message.contains(passcode), "\(message)")
            #expect(!message.lowercased().contains(passcode.lowercased()), "\(message)")
        }
        #expect(problems == 4)

        let simple = PasscodeRules(minLength: 4, allowSimple: false)
        for passcode in ["7777", "5678", "qrst", "TSRQ"] {
            let message = simple.problem(with: passcode)
            #expect(message != nil)
            #expect(message?.contains(passcode) == false)
        }
    }

    @Test func rulesAreEquatable() {
        #expect(PasscodeRules() == PasscodeRules(minLength: 4, requireAlphanumeric: false, allowSimple: true))
        #expect(PasscodeRules(minLength: 5) != PasscodeRules())
        #expect(PasscodeRules(allowSimple: false) != PasscodeRules())
    }
}

/// The stronger defaults where no TPM protects the key (Intune-like), and what the policy keeps.
struct SoftwareOnlyPasscodeRulesTests {
    let hardened = PasscodeRules().hardenedForSoftwareOnly(minLengthSet: false, allowSimpleSet: false)

    @Test func withoutATPMTheDefaultNeedsSixCharactersAndNamesWhy() {
        #expect(hardened.minLength == 6)
        #expect(
            hardened.problem(with: "2468")
                == "the passcode must have at least 6 characters (no TPM protects the key)")
        #expect(hardened.problem(with: "246813") == nil)
    }

    @Test(arguments: ["123456", "654321", "111111", "abcdef"])
    func withoutATPMSimpleSequencesAreRefused(passcode: String) {
        #expect(
            hardened.problem(with: passcode)
                == "the passcode is too simple (a repeated character or a straight sequence) (no TPM protects the key)")
    }

    @Test(arguments: ["121212", "123123", "abcabc", "258258258", "ababab"])
    func withoutATPMRepeatingPatternsAreRefused(passcode: String) {
        #expect(
            hardened.problem(with: passcode)
                == "the passcode is a repeating pattern (a shorter part repeated, as in 121212) (no TPM protects the key)"
        )
    }

    @Test(arguments: ["135792", "1212123", "aabbcc", "worm-hole"])
    func withoutATPMOtherPasscodesAreAccepted(passcode: String) {
        #expect(hardened.problem(with: passcode) == nil)
    }

    @Test func whatThePolicySetsStands() {
        let explicit = PasscodeRules(minLength: 4).hardenedForSoftwareOnly(minLengthSet: true, allowSimpleSet: true)
        #expect(explicit == PasscodeRules(minLength: 4))
        #expect(explicit.problem(with: "1234") == nil)
        // A longer policy minimum is never lowered.
        let longer = PasscodeRules(minLength: 8).hardenedForSoftwareOnly(minLengthSet: true, allowSimpleSet: false)
        #expect(longer.minLength == 8)
        #expect(longer.allowSimple == false)
        #expect(longer.problem(with: "12345678") != nil)
    }
}
