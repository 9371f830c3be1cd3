/// The formats a token can be imported from (the policy's `tokens.importKinds` names them).
public enum TokenImportKind: String, Sendable, CaseIterable, Codable {
    case ctf
    case sdtid
    case otpauth
    case otpauthMigration = "otpauth-migration"
    /// A CT-KIP provisioning URL: the agent runs the exchange (`CTKIPClient`) over HTTPS.
    case ctkip
}

/// What an import gives: the data and the secrets that open it.
public struct TokenImportRequest: Sendable {
    /// A CTF string or URL, an SDTID document, an `otpauth://` or `otpauth-migration://` URI.
    public var data: String
    /// The token's password (CTF, SDTID), if it has one.
    public var password: String?
    /// The device id a bound token must match: the importing app's binding id (`BindingID`).
    public var deviceID: String?
    /// A SecurID PIN to store with the token (4–8 digits), if any.
    public var pin: String?

    public init(data: String, password: String? = nil, deviceID: String? = nil, pin: String? = nil) {
        self.data = data
        self.password = password
        self.deviceID = deviceID
        self.pin = pin
    }
}

/// Reads an import into records: the format is recognized, a SecurID token is decrypted with the
/// password and the caller's device id, refused when expired at `now` or bound to another device,
/// and its PIN checked; OATH tokens get their keyed id. Nothing here stores anything.
public enum TokenImporter {
    /// The longest import read, in bytes of UTF-8: ``TokenInputLimit/bytes`` (16 KiB).
    public static let maximumLength = TokenInputLimit.bytes

    /// The format of `data`, or nil when it is none of them.
    public static func kind(of data: String) -> TokenImportKind? {
        let text = data.trimmingWhitespace()
        let lower = text.prefix(24).lowercased()
        if text.hasPrefix("<") { return .sdtid }
        if CTKIPProvisioning.matches(text) { return .ctkip }
        if lower.hasPrefix("otpauth-migration://") { return .otpauthMigration }
        if lower.hasPrefix("otpauth://") { return .otpauth }
        if let first = text.first, "12AB".contains(first) || text.lowercased().contains("ctfdata=") { return .ctf }
        return nil
    }

    /// The tokens of `request`; `oathIDKey` keys the ids of OATH tokens.
    public static func read(_ request: TokenImportRequest, now: Int64, oathIDKey: [UInt8]) throws(TokenFormatError)
        -> (kind: TokenImportKind, tokens: [TokenRecord])
    {
        let length = request.data.utf8.count
        if length > maximumLength {
            throw .invalidField(
                field: "data",
                reason: "it is \(length) bytes; a token import is at most \(maximumLength) bytes (16 KiB)")
        }
        guard let kind = kind(of: request.data) else {
            throw .invalidField(
                field: "data", reason: "it is not a CTF string, an SDTID file, an otpauth or otpauth-migration URI")
        }
        switch kind {
        case .ctkip:
            throw .invalidField(field: "data", reason: "a CT-KIP URL is provisioned from its server, not read")
        case .ctf, .sdtid:
            let password = request.password.flatMap { $0.isEmpty ? nil : $0 }
            let token: SecurIDToken
            if kind == .sdtid {
                token = try SDTIDDecoder.decrypt(
                    SDTIDFile.parse(Array(request.data.utf8)), password: password, deviceID: request.deviceID)
            } else {
                token = try SecurIDDecoder.decrypt(
                    CTFString.parse(request.data), password: password, deviceID: request.deviceID)
            }
            try token.checkNotExpired(at: now)
            let pin = request.pin.flatMap { $0.isEmpty ? nil : $0 }
            if let pin {
                guard token.pinMode != .pinless else { throw .invalidPIN(reason: "this token takes no PIN") }
                try SecurIDCode.validate(pin: pin)
            }
            return (kind, [TokenRecord(serial: token.serial, secret: .securID(token), pin: pin)])
        case .otpauth, .otpauthMigration:
            if let pin = request.pin, !pin.isEmpty { throw .invalidPIN(reason: "OATH tokens take no PIN") }
            let tokens =
                kind == .otpauth ? [try OTPAuthURI.parse(request.data)] : try MigrationPayload.parse(uri: request.data)
            return (
                kind,
                tokens.map { TokenRecord(serial: TokenRecord.oathSerial($0, key: oathIDKey), secret: .oath($0)) }
            )
        }
    }
}
