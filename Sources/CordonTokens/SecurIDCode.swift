/// A one-time code with the time it stops being current.
public struct TokenCode: Sendable, Equatable {
    /// The code (for a key fob: the PIN followed by the code).
    public var code: String
    /// The code of the next interval.
    public var next: String
    /// Seconds until `next` becomes current (1…interval).
    public var secondsLeft: Int
    /// The interval, in seconds (0 for HOTP: an event token has no time).
    public var interval: Int

    public init(code: String, next: String, secondsLeft: Int, interval: Int) {
        self.code = code
        self.next = next
        self.secondsLeft = secondsLeft
        self.interval = interval
    }
}

/// The SecurID token-code algorithm: five chained AES-128 encryptions of the BCD time and serial
/// under the seed, four codes per block; PIN handling per mode.
public enum SecurIDCode {
    /// PINs have 4 to 8 digits.
    public static let pinLengths = 4...8

    /// Checks a PIN's format (4–8 decimal digits).
    public static func validate(pin: String) throws(TokenFormatError) {
        guard pinLengths.contains(pin.utf8.count) else {
            throw .invalidPIN(reason: "a PIN has 4 to 8 digits, not \(pin.utf8.count)")
        }
        guard pin.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .invalidPIN(reason: "a PIN has only digits")
        }
    }

    /// The current and next code at `time` (Unix seconds), with the PIN applied per the token's mode.
    /// A PINPad or key-fob token needs a PIN; a PINless one refuses one.
    public static func code(for token: SecurIDToken, at time: Int64, pin: String?) throws(TokenFormatError)
        -> TokenCode
    {
        switch token.pinMode {
        case .pinless:
            if let pin, !pin.isEmpty { throw .invalidPIN(reason: "this token takes no PIN") }
        case .pinPad, .keyFob:
            guard let pin, !pin.isEmpty else { throw .invalidPIN(reason: "this token needs a PIN") }
            try validate(pin: pin)
        }
        let interval = Int64(token.interval)
        let elapsed = ((time % interval) + interval) % interval
        return TokenCode(
            code: apply(pin: pin, to: raw(token, at: time), mode: token.pinMode),
            next: apply(pin: pin, to: raw(token, at: time + interval), mode: token.pinMode),
            secondsLeft: Int(interval - elapsed), interval: token.interval)
    }

    /// The token code alone (no PIN) at `time`.
    public static func raw(_ token: SecurIDToken, at time: Int64) -> [UInt8] {
        let date = CivilDate(unixTime: time)
        let secondsOfDay = Int(((time % 86_400) + 86_400) % 86_400)
        let hour = secondsOfDay / 3600
        let minute = secondsOfDay / 60 % 60
        let second = secondsOfDay % 60
        let isThirty = token.interval == 30
        var bcd = [UInt8](repeating: 0, count: 8)
        writeBCD(&bcd, at: 0, value: date.year, bytes: 2)
        writeBCD(&bcd, at: 2, value: date.month, bytes: 1)
        writeBCD(&bcd, at: 3, value: date.day, bytes: 1)
        writeBCD(&bcd, at: 4, value: hour, bytes: 1)
        writeBCD(&bcd, at: 5, value: minute & ~(isThirty ? 0x01 : 0x03), bytes: 1)

        let serial = Array(token.serial.utf8).map { $0 &- UInt8(ascii: "0") }
        func block(_ count: Int) -> [UInt8] {
            var key =
                [UInt8](repeating: 0xaa, count: 8) + [UInt8](repeating: 0, count: 4)
                + [UInt8](repeating: 0xbb, count: 4)
            key.replaceSubrange(0..<count, with: bcd[0..<count])
            for (offset, index) in stride(from: 4, to: 12, by: 2).enumerated() where serial.count == 12 {
                key[8 + offset] = serial[index] << 4 | serial[index + 1]
            }
            return key
        }
        var key = SecurIDCrypto.encrypt(block(2), key: token.seed)
        key = SecurIDCrypto.encrypt(block(3), key: key)
        key = SecurIDCrypto.encrypt(block(4), key: key)
        key = SecurIDCrypto.encrypt(block(5), key: key)
        key = SecurIDCrypto.encrypt(block(8), key: key)

        let index = isThirty ? ((minute & 0x01) << 3) | ((second >= 30 ? 1 : 0) << 2) : (minute & 0x03) << 2
        var value =
            UInt32(key[index]) << 24 | UInt32(key[index + 1]) << 16 | UInt32(key[index + 2]) << 8
            | UInt32(key[index + 3])
        var digits = [UInt8](repeating: 0, count: token.digits)
        for position in stride(from: token.digits - 1, through: 0, by: -1) {
            digits[position] = UInt8(value % 10)
            value /= 10
        }
        return digits
    }

    /// PINPad: PIN digits added into the last digits (mod 10); key fob: PIN then code; PINless: code.
    static func apply(pin: String?, to digits: [UInt8], mode: SecurIDPINMode) -> String {
        let pinDigits = Array((pin ?? "").utf8).map { $0 - UInt8(ascii: "0") }
        var result = digits
        switch mode {
        case .pinless: break
        case .keyFob: result = pinDigits + digits
        case .pinPad:
            for offset in 0..<min(pinDigits.count, result.count) {
                let position = result.count - 1 - offset
                result[position] = (result[position] + pinDigits[pinDigits.count - 1 - offset]) % 10
            }
        }
        return String(decoding: result.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
    }

    private static func writeBCD(_ output: inout [UInt8], at start: Int, value: Int, bytes: Int) {
        var remaining = value
        for position in stride(from: start + bytes - 1, through: start, by: -1) {
            let low = UInt8(remaining % 10)
            remaining /= 10
            let high = UInt8(remaining % 10)
            remaining /= 10
            output[position] = high << 4 | low
        }
    }
}
