/// `io.cordon.Tokens.Import`: a CTF string or URL, an SDTID document, an `otpauth://` or
/// `otpauth-migration://` URI, with the token's password and PIN if it has them. Needs the
/// passcode (checked and counted like `Unlock`'s; audited).
public struct TokenImportParameters: Codable, Sendable, Equatable {
    /// The most `data` may hold, in bytes of UTF-8 (16 KiB): the agent refuses more
    /// (`TokenFormat`, field `data`) and the CLI checks it before sending. Text of this size
    /// without control characters (tab, CR and LF aside) fits one varlink message even escaped.
    public static let maximumDataBytes = 16 * 1024

    public var data: String
    public var password: String?
    public var pin: String?
    public var nickname: String?
    public var passcode: String
    /// CT-KIP only: retry without validating the server's certificate (allowed by
    /// `tokens.ctkipAllowInsecure`; audited).
    public var insecure: Bool?

    public init(
        data: String, password: String? = nil, pin: String? = nil, nickname: String? = nil, passcode: String,
        insecure: Bool? = nil
    ) {
        self.data = data
        self.password = password
        self.pin = pin
        self.nickname = nickname
        self.passcode = passcode
        self.insecure = insecure
    }
}

/// One token's metadata (never its seed, PIN or a code).
public struct TokenInfo: Codable, Sendable, Equatable {
    /// The SecurID serial, or `oath-` and 16 hex digits for an OATH token.
    public var serial: String
    /// `securid`, `totp` or `hotp`.
    public var kind: String
    public var nickname: String
    public var digits: Int
    /// Seconds per code; 0 for HOTP.
    public var interval: Int
    /// `pinless`, `pinPad`, `keyFob` (SecurID) or `none` (OATH).
    public var pinMode: String
    /// Unix time the token stops working (SecurID), if it expires.
    public var expiry: Int?
    /// Unix time of the import.
    public var importedAt: Double

    public init(
        serial: String, kind: String, nickname: String, digits: Int, interval: Int, pinMode: String, expiry: Int?,
        importedAt: Double
    ) {
        self.serial = serial
        self.kind = kind
        self.nickname = nickname
        self.digits = digits
        self.interval = interval
        self.pinMode = pinMode
        self.expiry = expiry
        self.importedAt = importedAt
    }
}

/// The reply of `Import` (the tokens just imported) and `List` (every token).
public struct TokenListReply: Codable, Sendable, Equatable {
    public var tokens: [TokenInfo]
    /// `List` only: the caller's device id, the binding id a bound SecurID token must be issued to
    /// (32 hex digits; from `/etc/machine-id` and the caller's app id); nil when the machine id
    /// cannot be read.
    public var deviceId: String?

    public init(tokens: [TokenInfo], deviceId: String? = nil) {
        self.tokens = tokens
        self.deviceId = deviceId
    }
}

/// `io.cordon.Tokens.List`: a registered code reader calls it without a passcode; the CLI gives it.
public struct TokenPasscodeParameters: Codable, Sendable, Equatable {
    public var passcode: String?

    public init(passcode: String? = nil) { self.passcode = passcode }
}

/// `io.cordon.Tokens.Code`: the current and next code of token `serial`; `pin` for a PIN token
/// (else its stored PIN); `passcode` when the CLI asks rather than a registered code reader.
public struct TokenCodeParameters: Codable, Sendable, Equatable {
    public var serial: String
    public var pin: String?
    public var passcode: String?

    public init(serial: String, pin: String? = nil, passcode: String? = nil) {
        self.serial = serial
        self.pin = pin
        self.passcode = passcode
    }
}

/// The reply of `io.cordon.Tokens.Code`.
public struct TokenCodeReply: Codable, Sendable, Equatable {
    public var serial: String
    /// The current code (a key fob's with the PIN before it).
    public var code: String
    /// The code of the next interval (TOTP, SecurID); nil for HOTP, whose next code is the next
    /// counter's and leaves the agent only when its turn comes.
    public var next: String?
    /// Seconds until `next` becomes current; 0 for HOTP.
    public var secondsLeft: Int
    /// Seconds per code; 0 for HOTP.
    public var interval: Int

    public init(serial: String, code: String, next: String?, secondsLeft: Int, interval: Int) {
        self.serial = serial
        self.code = code
        self.next = next
        self.secondsLeft = secondsLeft
        self.interval = interval
    }
}

/// `io.cordon.Tokens.Rename`: a new nickname (1 to 32 characters) for token `serial`.
public struct TokenRenameParameters: Codable, Sendable, Equatable {
    public var serial: String
    public var nickname: String
    public var passcode: String

    public init(serial: String, nickname: String, passcode: String) {
        self.serial = serial
        self.nickname = nickname
        self.passcode = passcode
    }
}

/// `io.cordon.Tokens.Remove`: deletes token `serial`.
public struct TokenRemoveParameters: Codable, Sendable, Equatable {
    public var serial: String
    public var passcode: String

    public init(serial: String, passcode: String) {
        self.serial = serial
        self.passcode = passcode
    }
}

/// `io.cordon.Tokens.Reset`: deletes every token and moves to a new key generation.
public struct TokenResetParameters: Codable, Sendable, Equatable {
    public var passcode: String

    public init(passcode: String) { self.passcode = passcode }
}
