/// The Key URI format (`otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=…&digits=…&period=…`,
/// `otpauth://hotp/…&counter=…`) as authenticator apps write it.
public enum OTPAuthURI {
    /// The longest URI read (a QR code holds less).
    public static let maximumLength = 4096

    /// Parses one `otpauth://` URI; errors name the field (`scheme`, `type`, `label`, `secret`, …).
    public static func parse(_ uri: String) throws(TokenFormatError) -> OATHToken {
        if uri.utf8.count > maximumLength {
            throw .invalidField(field: "uri", reason: "it is longer than \(maximumLength) bytes")
        }
        let prefix = "otpauth://"
        guard uri.utf8.count > prefix.utf8.count, uri.lowercased().hasPrefix(prefix) else {
            throw .invalidField(field: "scheme", reason: "an OATH key URI starts with otpauth://")
        }
        let rest = uri.dropFirst(prefix.count)
        let queryStart = rest.firstIndex(of: "?")
        let path = rest[..<(queryStart ?? rest.endIndex)]
        let query = queryStart.map { rest[rest.index(after: $0)...] } ?? ""
        guard let slash = path.firstIndex(of: "/") else {
            throw .invalidField(field: "label", reason: "the URI has no /label after its type")
        }
        let type = path[..<slash].lowercased()
        let label = try PercentEncoding.decode(path[path.index(after: slash)...], field: "label")
        let items = try PercentEncoding.queryItems(query, context: "query", plusIsSpace: true)

        guard let secretText = items["secret"], !secretText.isEmpty else {
            throw .invalidField(field: "secret", reason: "the URI has no secret")
        }
        let secret = try Base32.decode(String(secretText.filter { $0 != " " }), field: "secret")

        let algorithm: OATHAlgorithm
        switch items["algorithm"]?.uppercased() {
        case nil, "SHA1": algorithm = .sha1
        case "SHA256": algorithm = .sha256
        case "SHA512": algorithm = .sha512
        case let other?: throw .invalidField(field: "algorithm", reason: "\(other) is not SHA1, SHA256 or SHA512")
        }
        let digits = try integer(items["digits"], field: "digits", default: 6)

        let kind: OATHKind
        switch type {
        case "totp":
            kind = .totp(period: try integer(items["period"], field: "period", default: 30))
        case "hotp":
            guard let counterText = items["counter"] else {
                throw .invalidField(field: "counter", reason: "an hotp URI needs a counter")
            }
            guard let counter = UInt64(counterText) else {
                throw .invalidField(field: "counter", reason: "it is not a non-negative integer")
            }
            kind = .hotp(counter: counter)
        default:
            throw .invalidField(field: "type", reason: "\(type) is not totp or hotp")
        }

        let (issuer, account) = splitLabel(label, issuer: items["issuer"] ?? "")
        let token = OATHToken(
            secret: secret, kind: kind, algorithm: algorithm, digits: digits, issuer: issuer, account: account)
        try token.validate()
        return token
    }

    /// The issuer and account of a label `Issuer:account`: after the `issuer` parameter's prefix when
    /// the label starts with it, else after the first colon; spaces after the colon are dropped.
    static func splitLabel(_ label: String, issuer: String) -> (issuer: String, account: String) {
        var labelIssuer = ""
        var account = Substring(label)
        if !issuer.isEmpty, label.hasPrefix(issuer + ":") {
            account = label.dropFirst(issuer.count + 1)
        } else if let colon = label.firstIndex(of: ":") {
            labelIssuer = String(label[..<colon])
            account = label[label.index(after: colon)...]
        }
        return (issuer.isEmpty ? labelIssuer : issuer, String(account.drop(while: { $0 == " " })))
    }

    static func integer(_ text: String?, field: String, default value: Int) throws(TokenFormatError) -> Int {
        guard let text else { return value }
        guard text.utf8.count <= 9, let number = Int(text), number >= 0 else {
            throw .invalidField(field: field, reason: "\(text.prefix(12)) is not a small non-negative integer")
        }
        return number
    }
}
