/// The recovery key printed once at `cordon init` (docs/ARCHITECTURE.md, "Keys"), in BitLocker's
/// form: 48 digits in 8 groups of 6, each group a multiple of 11 below 720,896, so it carries
/// 16 bits and a typed group is checked before any key is derived (a single wrong digit or two
/// swapped neighbours never give another multiple of 11).
///
/// The 128 random bits are the input of HKDF in `KeyCustody.wrapForRecovery`; 128 bits is
/// beyond any offline search, so no passcode stretching is needed.
public struct RecoveryKey: Sendable {
    /// Groups of six digits.
    public static let groupCount = 8
    /// The random bytes (two per group), in locked memory.
    public let secret: SecureBytes

    /// A new random recovery key.
    public static func generate() -> RecoveryKey {
        RecoveryKey(
            secret: SecureBytes(count: 2 * groupCount) { buffer in
                var generator = SystemRandomNumberGenerator()
                for index in buffer.indices { buffer[index] = generator.next() }
            })
    }

    init(secret: SecureBytes) { self.secret = secret }

    /// `123456-234567-...`: the 8 groups joined by dashes.
    public var formatted: String {
        secret.withUnsafeBytes { bytes in
            (0..<Self.groupCount).map { group in
                let value = (Int(bytes[2 * group]) << 8 | Int(bytes[2 * group + 1])) * 11
                let digits = String(value)
                return String(repeating: "0", count: 6 - digits.count) + digits
            }.joined(separator: "-")
        }
    }

    /// Parses a typed key: 48 digits, in groups of 6 separated by dashes or spaces (or none).
    /// The error names the first group that is wrong and never repeats the key.
    public static func parse(_ text: String) throws(RecoveryKeyError) -> RecoveryKey {
        var digits: [UInt8] = []
        defer { for index in digits.indices { digits[index] = 0 } }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "0"..."9": digits.append(UInt8(scalar.value - 48))
            case "-", " ", "\t": continue
            default: throw .unexpectedCharacter
            }
            if digits.count > 6 * groupCount { throw .wrongLength(digits: digits.count) }
        }
        guard digits.count == 6 * groupCount else { throw .wrongLength(digits: digits.count) }
        var values: [Int] = []
        defer { for index in values.indices { values[index] = 0 } }
        for group in 0..<groupCount {
            let value = digits[(6 * group)..<(6 * group + 6)].reduce(0) { $0 * 10 + Int($1) }
            guard value % 11 == 0 else { throw .checkFailed(group: group + 1) }
            guard value / 11 <= Int(UInt16.max) else { throw .outOfRange(group: group + 1) }
            values.append(value / 11)
        }
        return RecoveryKey(
            secret: SecureBytes(count: 2 * groupCount) { buffer in
                for (group, value) in values.enumerated() {
                    buffer[2 * group] = UInt8(value >> 8)
                    buffer[2 * group + 1] = UInt8(value & 0xFF)
                }
            })
    }
}

/// Why a typed recovery key is not one; never contains the key.
public enum RecoveryKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not 48 digits.
    case wrongLength(digits: Int)
    /// Something other than digits, dashes and spaces.
    case unexpectedCharacter
    /// The group (1 to 8) is not a multiple of 11: a digit is mistyped.
    case checkFailed(group: Int)
    /// The group (1 to 8) is above 720,885.
    case outOfRange(group: Int)

    public var description: String {
        switch self {
        case .wrongLength(let digits): return "a recovery key has 48 digits (8 groups of 6), not \(digits)"
        case .unexpectedCharacter: return "a recovery key has only digits, in groups separated by dashes"
        case .checkFailed(let group): return "group \(group) is not a multiple of 11: a digit in it is mistyped"
        case .outOfRange(let group): return "group \(group) is above 720885: a digit in it is mistyped"
        }
    }
}
