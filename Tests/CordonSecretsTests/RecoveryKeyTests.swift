import CordonSecrets
import Foundation
import Testing

/// The recovery key's BitLocker form: every group checks itself, so typos fail before any crypto.
struct RecoveryKeyTests {
    @Test func aGeneratedKeyFormatsAndParsesBackToTheSameBytes() throws {
        let key = RecoveryKey.generate()
        let text = key.formatted
        #expect(text.wholeMatch(of: #/[0-9]{6}(-[0-9]{6}){7}/#) != nil, "\(text)")
        let parsed = try RecoveryKey.parse(text)
        #expect(parsed.secret.withUnsafeBytes { Array($0) } == key.secret.withUnsafeBytes { Array($0) })
        // Spaces or no separators are accepted too.
        let spaced = try RecoveryKey.parse(text.replacingOccurrences(of: "-", with: " "))
        #expect(spaced.formatted == text)
        #expect(try RecoveryKey.parse(text.replacingOccurrences(of: "-", with: "")).formatted == text)
    }

    @Test func everySingleDigitTypoAndEveryAdjacentSwapIsCaught() throws {
        let text = RecoveryKey.generate().formatted
        let digits = Array(text)
        for index in digits.indices where digits[index] != "-" {
            for replacement in "0123456789" where replacement != digits[index] {
                var typo = digits
                typo[index] = replacement
                #expect(throws: RecoveryKeyError.self) { try RecoveryKey.parse(String(typo)) }
            }
            if index + 1 < digits.count, digits[index + 1] != "-", digits[index] != digits[index + 1] {
                var swapped = digits
                swapped.swapAt(index, index + 1)
                #expect(throws: RecoveryKeyError.self) { try RecoveryKey.parse(String(swapped)) }
            }
        }
    }

    @Test func malformedKeysNameWhatIsWrongWithoutRepeatingTheKey() {
        #expect(throws: RecoveryKeyError.wrongLength(digits: 47)) {
            try RecoveryKey.parse(String(repeating: "000000-", count: 7) + "00000")
        }
        #expect(throws: RecoveryKeyError.unexpectedCharacter) {
            try RecoveryKey.parse(String(repeating: "000000-", count: 7) + "00000a")
        }
        #expect(throws: RecoveryKeyError.checkFailed(group: 2)) {
            try RecoveryKey.parse("000000-000001-" + String(repeating: "000000-", count: 5) + "000000")
        }
        // 65536 × 11 = 720896: a multiple of 11 that carries more than 16 bits.
        #expect(throws: RecoveryKeyError.outOfRange(group: 8)) {
            try RecoveryKey.parse(String(repeating: "000000-", count: 7) + "720896")
        }
        #expect(RecoveryKeyError.checkFailed(group: 3).description.contains("group 3"))
    }

    @Test func theRecoveryWrappingOpensOnlyWithItsKey() throws {
        let custody = KeyCustody()
        let master = custody.makeMasterKey()
        let key = RecoveryKey.generate()
        let sealed = try custody.wrapForRecovery(master, recoveryKey: key.secret)
        let reopened = try custody.unwrapWithRecovery(sealed, recoveryKey: try RecoveryKey.parse(key.formatted).secret)
        #expect(reopened.withUnsafeBytes { Array($0) } == master.withUnsafeBytes { Array($0) })
        #expect(throws: KeyCustodyError.wrongPasscode) {
            try custody.unwrapWithRecovery(sealed, recoveryKey: RecoveryKey.generate().secret)
        }
    }
}
