import Crypto

/// HOTP (RFC 4226) and TOTP (RFC 6238) codes.
public enum OATHCode {
    /// The HOTP value of `counter`: dynamic truncation of the HMAC, `digits` decimal digits.
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int, algorithm: OATHAlgorithm) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { message[index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
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
        switch token.kind {
        case .hotp(let counter):
            return TokenCode(
                code: hotp(secret: token.secret, counter: counter, digits: token.digits, algorithm: token.algorithm),
                next: hotp(
                    secret: token.secret, counter: counter &+ 1, digits: token.digits, algorithm: token.algorithm),
                secondsLeft: 0, interval: 0)
        case .totp(let period):
            let step = step(time: time, period: period)
            let elapsed = time <= 0 ? 0 : Int(time % Int64(period))
            return TokenCode(
                code: hotp(secret: token.secret, counter: step, digits: token.digits, algorithm: token.algorithm),
                next: hotp(secret: token.secret, counter: step + 1, digits: token.digits, algorithm: token.algorithm),
                secondsLeft: period - elapsed, interval: period)
        }
    }
}
