/// The hash an OATH token's HMAC uses.
public enum OATHAlgorithm: String, Sendable, Equatable, Codable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"
}

/// Whether an OATH token counts events (HOTP, RFC 4226) or time steps (TOTP, RFC 6238).
public enum OATHKind: Sendable, Equatable, Codable {
    /// The next code uses `counter`; the counter then advances.
    case hotp(counter: UInt64)
    /// The code of the time step `(time - 0) / period`.
    case totp(period: Int)
}

/// An OATH token as imported: its secret, its parameters and its label.
public struct OATHToken: Sendable, Equatable {
    /// The HMAC key (never logged).
    public var secret: [UInt8]
    public var kind: OATHKind
    public var algorithm: OATHAlgorithm
    /// 6, 7 or 8.
    public var digits: Int
    /// The issuer (the `issuer` parameter, else the label's prefix before `:`), or empty.
    public var issuer: String
    /// The account name (the label after the issuer prefix).
    public var account: String

    public init(
        secret: [UInt8], kind: OATHKind, algorithm: OATHAlgorithm = .sha1, digits: Int = 6, issuer: String = "",
        account: String = ""
    ) {
        self.secret = secret
        self.kind = kind
        self.algorithm = algorithm
        self.digits = digits
        self.issuer = issuer
        self.account = account
    }

    /// The digit counts the Key URI format allows here.
    public static let allowedDigits = 6...8
    /// The periods allowed for TOTP, in seconds.
    public static let allowedPeriods = 1...86_400

    /// Checks the parameters; `field` names the first one that is wrong.
    public func validate() throws(TokenFormatError) {
        if secret.isEmpty { throw .invalidField(field: "secret", reason: "it is empty") }
        if secret.count > 128 { throw .invalidField(field: "secret", reason: "it is longer than 128 bytes") }
        if issuer.utf8.count > 256 { throw .invalidField(field: "issuer", reason: "it is longer than 256 bytes") }
        if account.utf8.count > 256 {
            throw .invalidField(field: "label", reason: "the account is longer than 256 bytes")
        }
        if !Self.allowedDigits.contains(digits) {
            throw .invalidField(field: "digits", reason: "\(digits) is not 6, 7 or 8")
        }
        if case .totp(let period) = kind, !Self.allowedPeriods.contains(period) {
            throw .invalidField(field: "period", reason: "\(period) is not 1…86400 seconds")
        }
    }

    /// The `otpauth://` URI of this token (secret in base32 with padding).
    public var keyURI: String {
        // An account with a colon and no issuer keeps an empty issuer prefix, so it reads back whole.
        let label = issuer.isEmpty ? (account.contains(":") ? ":\(account)" : account) : "\(issuer):\(account)"
        var query = "secret=\(Base32.encode(secret))"
        if !issuer.isEmpty { query += "&issuer=\(PercentEncoding.encode(issuer))" }
        query += "&algorithm=\(algorithm.rawValue)&digits=\(digits)"
        switch kind {
        case .hotp(let counter): return "otpauth://hotp/\(PercentEncoding.encode(label))?\(query)&counter=\(counter)"
        case .totp(let period): return "otpauth://totp/\(PercentEncoding.encode(label))?\(query)&period=\(period)"
        }
    }
}
