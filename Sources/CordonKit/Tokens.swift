import CordonProtocol

/// Software tokens kept by the agent (`io.cordon.Tokens`): a wrapped app listed in the policy's
/// `tokens.codeReaders` reads codes; seeds never leave the agent (docs/ARCHITECTURE.md, "Tokens").
///
/// ```swift
/// let tokens = Tokens(app: app)
/// let code = try await tokens.code(serial: "000123456789")
/// print(code.code, "valid for", code.secondsLeft, "s")
/// ```
public struct Tokens: Sendable {
    /// The registered app whose calls these are.
    public let app: CordonApp

    public init(app: CordonApp) {
        self.app = app
    }

    /// Every token's metadata (serial, kind, digits, interval, PIN mode, expiry), oldest first.
    public func list() async throws -> [TokenInfo] {
        try await app.control.call(.tokenList, TokenPasscodeParameters(), returning: TokenListReply.self).tokens
    }

    /// The current code of `serial`; for a timed token (TOTP, SecurID) also the next interval's
    /// and the seconds the current one has left (an HOTP reply has no `next`: the next counter's
    /// code is given only at its turn); `pin` for a token that needs one. Throws
    /// `CordonError.notCodeReader` unless the policy lists the app.
    public func code(serial: String, pin: String? = nil) async throws -> TokenCodeReply {
        try await app.control.call(
            .tokenCode, TokenCodeParameters(serial: serial, pin: pin), returning: TokenCodeReply.self)
    }
}

extension CordonClient {
    /// Imports the tokens in `data` (a CTF string or URL, an `otpauth://` or
    /// `otpauth-migration://` URI, an SDTID file's XML, or a CT-KIP URL the agent provisions from
    /// its server); needs the passcode. `insecure` retries a CT-KIP import without validating the
    /// server's certificate: audited, and refused with `CordonError.ctkipInsecureNotAllowed`
    /// unless the policy's `tokens.ctkipAllowInsecure` is true. `data` is at most
    /// `TokenImportParameters.maximumDataBytes` (16 KiB; more is `CordonError.tokenFormat`, field
    /// `data`). All or nothing: a batch past `tokens.maxTokens` (`CordonError.tokenLimit`) or with an
    /// entry that cannot be read stores none of its tokens.
    public func importTokens(
        _ data: String, password: String? = nil, pin: String? = nil, nickname: String? = nil, passcode: String,
        insecure: Bool = false
    ) async throws -> [TokenInfo] {
        try await connection.call(
            .tokenImport,
            TokenImportParameters(
                data: data, password: password, pin: pin, nickname: nickname, passcode: passcode,
                insecure: insecure ? true : nil),
            returning: TokenListReply.self
        ).tokens
    }

    /// Every token's metadata; the CLI needs the passcode.
    public func tokens(passcode: String) async throws -> [TokenInfo] {
        try await tokenList(passcode: passcode).tokens
    }

    /// Every token's metadata and the CLI's device id (what a bound SecurID token must be issued
    /// to); needs the passcode.
    public func tokenList(passcode: String) async throws -> TokenListReply {
        try await connection.call(
            .tokenList, TokenPasscodeParameters(passcode: passcode), returning: TokenListReply.self)
    }

    /// A code for the user at the CLI, when the policy's `tokens.cliReadsCodes` allows it.
    public func tokenCode(serial: String, pin: String? = nil, passcode: String) async throws -> TokenCodeReply {
        try await connection.call(
            .tokenCode, TokenCodeParameters(serial: serial, pin: pin, passcode: passcode),
            returning: TokenCodeReply.self)
    }

    /// Gives `serial` a nickname (at most 32 characters).
    public func renameToken(serial: String, nickname: String, passcode: String) async throws {
        _ = try await connection.call(
            .tokenRename, TokenRenameParameters(serial: serial, nickname: nickname, passcode: passcode),
            returning: NoParameters.self)
    }

    /// Deletes `serial`.
    public func removeToken(serial: String, passcode: String) async throws {
        _ = try await connection.call(
            .tokenRemove, TokenRemoveParameters(serial: serial, passcode: passcode), returning: NoParameters.self)
    }

    /// Deletes every token and starts a new key generation for them.
    public func resetTokens(passcode: String) async throws {
        _ = try await connection.call(
            .tokenReset, TokenResetParameters(passcode: passcode), returning: NoParameters.self)
    }
}
