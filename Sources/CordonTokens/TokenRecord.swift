import Crypto

/// One imported token as the agent keeps it: what `RecordSealer` seals (the seed, the PIN and the
/// parameters, `encoded()`), and the metadata `List` shows in the clear.
public struct TokenRecord: Sendable, Equatable {
    /// The token's secret part.
    public enum Secret: Sendable, Equatable {
        case securID(SecurIDToken)
        case oath(OATHToken)
    }

    /// The SecurID serial, or `oath-` and 16 hex digits of a keyed hash of the OATH parameters.
    public var serial: String
    public var secret: Secret
    /// The PIN stored with a PINPad or key-fob token (4–8 digits), if the user gave one.
    public var pin: String?

    public init(serial: String, secret: Secret, pin: String? = nil) {
        self.serial = serial
        self.secret = secret
        self.pin = pin
    }

    /// `securid`, `totp` or `hotp`.
    public var kind: String {
        switch secret {
        case .securID: "securid"
        case .oath(let token):
            if case .hotp = token.kind { "hotp" } else { "totp" }
        }
    }

    public var digits: Int {
        switch secret {
        case .securID(let token): token.digits
        case .oath(let token): token.digits
        }
    }

    /// Seconds per code; 0 for HOTP.
    public var interval: Int {
        switch secret {
        case .securID(let token): return token.interval
        case .oath(let token):
            if case .totp(let period) = token.kind { return period }
            return 0
        }
    }

    /// `pinless`, `pinPad` or `keyFob` for SecurID; `none` for OATH.
    public var pinMode: String {
        if case .securID(let token) = secret { return token.pinMode.rawValue }
        return "none"
    }

    /// The Unix time a SecurID token stops working; nil for OATH.
    public var expiry: Int64? {
        if case .securID(let token) = secret { return token.expiry }
        return nil
    }

    /// The HOTP counter of the next code; nil for time-based tokens.
    public var counter: UInt64? {
        if case .oath(let token) = secret, case .hotp(let counter) = token.kind { return counter }
        return nil
    }

    /// The current and next code at `time`. A SecurID token uses `pin`, else its stored PIN; an HOTP
    /// token gives the code of `counter` (the caller stores `counter + 1` first).
    public func code(at time: Int64, pin: String? = nil) throws(TokenFormatError) -> TokenCode {
        switch secret {
        case .securID(let token):
            try token.checkNotExpired(at: time)
            return try SecurIDCode.code(for: token, at: time, pin: pin ?? self.pin)
        case .oath(let token):
            return OATHCode.code(for: token, at: time)
        }
    }

    /// The id of an OATH token: `oath-` and the first 8 bytes (hex) of HMAC-SHA256 under `key` over
    /// its kind, algorithm, digits and secret, so importing it twice is a duplicate and the id says
    /// nothing about the secret without the key.
    public static func oathSerial(_ token: OATHToken, key: [UInt8]) -> String {
        var message = Array("cordon.tokens.oath:".utf8)
        switch token.kind {
        case .hotp: message += Array("hotp:".utf8)
        case .totp(let period): message += Array("totp:\(period):".utf8)
        }
        message += Array("\(token.algorithm.rawValue):\(token.digits):".utf8) + token.secret
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return "oath-" + BindingID.hex(Array(mac.prefix(8)))
    }
}
