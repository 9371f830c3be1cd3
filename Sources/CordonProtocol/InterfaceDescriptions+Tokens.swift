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

        # Every token's metadata, oldest first, and the caller's device id (the binding id a bound
        # SecurID token must be issued to; absent when the machine id cannot be read).
        method List(passcode: ?string) -> (tokens: []Token, deviceId: ?string)

        # The current code and, for a timed token (TOTP, SecurID), the next interval's; secondsLeft
        # until next. HOTP: the current code only (no next), secondsLeft 0; its counter is stored
        # advanced before the code is returned.
        method Code(serial: string, pin: ?string, passcode: ?string) -> (
          serial: string,
          code: string,
          next: ?string,
          secondsLeft: int,
          interval: int
        )

        # Gives token serial a nickname of 1 to 32 characters.
        method Rename(serial: string, nickname: string, passcode: string) -> ()

        # Deletes token serial.
        method Remove(serial: string, passcode: string) -> ()

        # Deletes every token and moves to a new key generation.
        method Reset(passcode: string) -> ()

        """ + ErrorDeclarations.idl(for: "io.cordon.Tokens")
}
