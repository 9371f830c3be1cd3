import Crypto

/// HOTP (RFC 4226) and TOTP (RFC 6238) codes.
public enum OATHCode {
    /// The HOTP value of `counter`: dynamic truncation of the HMAC, `digits` decimal digits.
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int, algorithm: OATHAlgorithm) -> String {
        hotp(secret: secret, counters: [counter], digits: digits, algorithm: algorithm)[0]
    }

    /// The HOTP values of `counters` under one key, which is set up once (a code and the next).
    static func hotp(secret: [UInt8], counters: [UInt64], digits: Int, algorithm: OATHAlgorithm) -> [String] {
        let key = SymmetricKey(data: secret)
        switch algorithm {
        case .sha1: return hotp(HMAC<Insecure.SHA1>(key: key), counters: counters, digits: digits)
        case .sha256: return hotp(HMAC<SHA256>(key: key), counters: counters, digits: digits)
        case .sha512: return hotp(HMAC<SHA512>(key: key), counters: counters, digits: digits)
        }
    }

    private static func hotp<H: HashFunction>(_ keyed: HMAC<H>, counters: [UInt64], digits: Int) -> [String] {
        counters.map { counter in
            var hmac = keyed
            withUnsafeBytes(of: counter.bigEndian) { hmac.update(data: $0) }
            return hmac.finalize().withUnsafeBytes { decimal(truncating: $0, digits: digits) }
        }
    }

    /// RFC 4226's dynamic truncation of `mac` to `digits` decimal digits.
    private static func decimal(truncating mac: UnsafeRawBufferPointer, digits: Int) -> String {
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The TOTP time step of `time` (Unix seconds, T0 = 0).
    public static func step(time: Int64, period: Int) -> UInt64 {
        time <= 0 ? 0 : UInt64(time / Int64(period))
    }

    /// The TOTP code at `time`.
    public static func totp(secret: [UInt8], time: Int64, period: Int, digits: Int, algorithm: OATHAlgorithm)
        -> String
    {
        hotp(secret: secret, counter: step(time: time, period: period), digits: digits, algorithm: algorithm)
    }

    /// A TOTP token's current and next code at `time`; for HOTP, the code of its counter and the next.
    public static func code(for token: OATHToken, at time: Int64) -> TokenCode {
        let (counter, secondsLeft, interval): (UInt64, Int, Int)
        switch token.kind {
        case .hotp(let current):
            (counter, secondsLeft, interval) = (current, 0, 0)
        case .totp(let period):
            let elapsed = time <= 0 ? 0 : Int(time % Int64(period))
            (counter, secondsLeft, interval) = (step(time: time, period: period), period - elapsed, period)
        }
        let codes = hotp(
            secret: token.secret, counters: [counter, counter &+ 1], digits: token.digits, algorithm: token.algorithm)
        return TokenCode(code: codes[0], next: codes[1], secondsLeft: secondsLeft, interval: interval)
    }
}
