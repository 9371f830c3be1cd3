extension InterfaceDescriptions {
    /// `io.cordon.Tokens`: software tokens (SecurID, HOTP, TOTP) kept in the container (docs/PROTOCOL.md).
    public static let tokens = """
        # Software tokens (RSA SecurID from CTF strings and SDTID files; HOTP and TOTP from otpauth and
        # otpauth-migration URIs), their seeds sealed with AES-256-GCM under a key derived from the
        # master key. Codes go only to verified managed registrations the policy lists in
        # tokens.codeReaders, or with the passcode to the CLI when tokens.cliReadsCodes allows; every
        # code read is audited (app and serial). Import, Rename, Remove and Reset need the passcode
        # (checked and counted like Unlock's; audited).
        interface io.cordon.Tokens

        type Token (
          serial: string,
          kind: string,
          nickname: string,
          digits: int,
          interval: int,
          pinMode: string,
          expiry: ?int,
          importedAt: float
        )

        # Imports the tokens in data (one, or a batch for otpauth-migration; a CT-KIP URL is
        # provisioned from its server, insecure: true retries without certificate validation when
        # tokens.ctkipAllowInsecure allows it, audited).
        method Import(
          data: string,
          password: ?string,
          pin: ?string,
          nickname: ?string,
          passcode: string,
          insecure: ?bool
        ) -> (tokens: []Token)

        # Every token's metadata, oldest first.
        method List(passcode: ?string) -> (tokens: []Token)

        # The current and next code; secondsLeft until next (0 for HOTP, whose counter is stored
        # advanced before the code is returned).
        method Code(serial: string, pin: ?string, passcode: ?string) -> (
          serial: string,
          code: string,
          next: string,
          secondsLeft: int,
          interval: int
        )

        # Gives token serial a nickname of 1 to 32 characters.
        method Rename(serial: string, nickname: string, passcode: string) -> ()

        # Deletes token serial.
        method Remove(serial: string, passcode: string) -> ()

        # Deletes every token and moves to a new key generation.
        method Reset(passcode: string) -> ()

        # A token with this serial is imported already.
        error DuplicateToken (serial: string)

        # No token has this serial.
        error TokenNotFound (serial: string)

        # The token expired at 00:00:00 UTC of expiryDay.
        error TokenExpired (expiryDay: string)

        # The token is bound to another device, or needs a device id.
        error TokenBoundElsewhere (reason: string)

        # The import or a parameter is not acceptable (field names it).
        error TokenFormat (field: string, reason: string)

        # The policy's tokens.maxTokens tokens are imported already.
        error TokenLimit (maximum: int)

        # The token needs a PIN and none was given or stored.
        error PinRequired (serial: string)

        # The policy's tokens.importKinds does not allow this kind.
        error KindNotAllowed (kind: string)

        # The caller may not read codes (tokens.codeReaders, tokens.cliReadsCodes).
        error NotCodeReader (appId: string)

        # Locked under tokens.dataAccess whenUnlocked, or the key is not held.
        error Locked (state: string)

        # A CT-KIP provisioning from server failed at step (ClientHello, ServerHello, ClientNonce,
        # ServerFinished); nothing was stored.
        error CTKIPFailed (server: string, step: string, reason: string)

        # insecure was asked and tokens.ctkipAllowInsecure is false.
        error CTKIPInsecureNotAllowed (server: string)

        """
}
