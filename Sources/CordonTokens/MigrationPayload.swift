/// Google Authenticator's export, `otpauth-migration://offline?data=…`: a base64 `MigrationPayload`
/// (protobuf) holding one `OtpParameters` per account. One import, many tokens.
public enum MigrationPayload {
    /// The longest URI read: the limit of any import (``TokenInputLimit/bytes``).
    public static let maximumLength = TokenInputLimit.bytes

    /// The tokens of one batch, in order; the error names the field or the byte offset.
    public static func parse(uri: String) throws(TokenFormatError) -> [OATHToken] {
        if uri.utf8.count > maximumLength {
            throw .invalidField(field: "uri", reason: "it is longer than \(maximumLength) bytes")
        }
        let prefix = "otpauth-migration://offline?"
        guard uri.lowercased().hasPrefix(prefix) else {
            throw .invalidField(field: "scheme", reason: "a migration URI starts with otpauth-migration://offline?")
        }
        let items = try PercentEncoding.queryItems(uri.dropFirst(prefix.count), context: "query", plusIsSpace: false)
        guard let data = items["data"], !data.isEmpty else {
            throw .invalidField(field: "data", reason: "the URI has no data")
        }
        return try parse(payload: try Base64.decode(data, field: "data"))
    }

    /// The tokens of a decoded `MigrationPayload`.
    public static func parse(payload: [UInt8]) throws(TokenFormatError) -> [OATHToken] {
        var reader = ProtobufReader(payload[...])
        var tokens: [OATHToken] = []
        while let item = try reader.next() {
            let (field, value, offset) = item
            guard field == 1 else { continue }  // version, batch size/index/id: not needed
            guard case .lengthDelimited(let message) = value else {
                throw .malformed(format: "protobuf", offset: offset, reason: "otp_parameters is not a message")
            }
            tokens.append(try otpParameters(message, at: offset))
        }
        if tokens.isEmpty { throw .invalidField(field: "data", reason: "the batch holds no account") }
        return tokens
    }

    private static func otpParameters(_ message: ArraySlice<UInt8>, at offset: Int) throws(TokenFormatError)
        -> OATHToken
    {
        var reader = ProtobufReader(message)
        var secret: [UInt8] = []
        var name = ""
        var issuer = ""
        var algorithm = OATHAlgorithm.sha1
        var digits = 6
        var isHOTP = false
        var counter: UInt64 = 0
        while let item = try reader.next() {
            let (field, value, fieldOffset) = item
            switch (field, value) {
            case (1, .lengthDelimited(let bytes)): secret = Array(bytes)
            case (2, .lengthDelimited(let bytes)): name = try string(bytes, field: "name", at: fieldOffset)
            case (3, .lengthDelimited(let bytes)): issuer = try string(bytes, field: "issuer", at: fieldOffset)
            case (4, .varint(let code)):
                switch code {
                case 0, 1: algorithm = .sha1
                case 2: algorithm = .sha256
                case 3: algorithm = .sha512
                default:
                    throw .malformed(
                        format: "protobuf", offset: fieldOffset, reason: "algorithm \(code) is not supported")
                }
            case (5, .varint(let code)):
                switch code {
                case 0, 1: digits = 6
                case 2: digits = 8
                default:
                    throw .malformed(format: "protobuf", offset: fieldOffset, reason: "digit count \(code) is unknown")
                }
            case (6, .varint(let code)):
                guard code <= 2 else {
                    throw .malformed(format: "protobuf", offset: fieldOffset, reason: "otp type \(code) is unknown")
                }
                isHOTP = code == 1
            case (7, .varint(let value)): counter = value
            case (1...7, _):
                throw .malformed(
                    format: "protobuf", offset: fieldOffset, reason: "field \(field) has the wrong wire type")
            default: continue
            }
        }
        if secret.isEmpty {
            throw .malformed(format: "protobuf", offset: offset, reason: "an account has no secret")
        }
        let (labelIssuer, account) = OTPAuthURI.splitLabel(name, issuer: issuer)
        issuer = labelIssuer
        let token = OATHToken(
            secret: secret, kind: isHOTP ? .hotp(counter: counter) : .totp(period: 30), algorithm: algorithm,
            digits: digits, issuer: issuer, account: account)
        try token.validate()
        return token
    }

    private static func string(_ bytes: ArraySlice<UInt8>, field: String, at offset: Int) throws(TokenFormatError)
        -> String
    {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformed(format: "protobuf", offset: offset, reason: "\(field) is not UTF-8")
        }
        return text
    }
}
