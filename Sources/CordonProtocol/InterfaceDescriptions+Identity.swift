extension InterfaceDescriptions {
    /// `io.cordon.Identity`: the identity broker (docs/PROTOCOL.md, docs/ARCHITECTURE.md "Identity").
    public static let identity = """
        # The identity broker: OAuth 2.0 access tokens per domain for verified managed apps of the
        # domain's access group (identity.accessGroups), one sign-in for every app of the group.
        # Tokens are sealed in the container; never given while it is locked; every issue, refresh,
        # denial and sign-out is audited.
        interface io.cordon.Identity

        # What the user is shown for a device sign-in (RFC 8628).
        type Prompt (
          provider: string,
          userCode: string,
          verificationURI: string,
          verificationURIComplete: ?string,
          expiresAt: float
        )

        type SignedOut (provider: string, sessions: int, revoked: bool, revocationProblem: ?string)

        type Session (
          domain: string,
          user: ?string,
          domainDisplayName: ?string,
          expiresAt: float,
          signedInAt: float,
          confirmedAt: float
        )

        # An OAuth provider's endpoints in use; discovery: the OpenID discovery document's URL when
        # some came from it.
        type Endpoints (
          deviceAuthorization: ?string,
          authorization: ?string,
          token: ?string,
          revocation: ?string,
          jwks: ?string,
          discovery: ?string
        )

        type Provider (
          name: string,
          flow: string,
          domains: []string,
          signingIn: bool,
          sessions: []Session,
          endpoints: ?Endpoints
        )

        # An access token for domain, to a verified managed app in an access group with it. Without
        # a session the agent signs in first (once for every waiting call); a due refresh is done
        # first, and a refused refresh signs in again.
        method GetToken(domain: string) -> (
          domain: string,
          provider: string,
          accessToken: string,
          tokenType: string,
          expiresAt: float
        )

        # Signs in to provider (the only one when omitted), or joins the sign-in running. With
        # more, a device prompt is sent first (prompt set, continues), then the outcome.
        method SignIn(provider: ?string) -> (provider: string, prompt: ?Prompt, expiresAt: ?float)

        # Revokes the tokens at the provider (RFC 7009, when it has a revocation endpoint),
        # deletes them and tells every app (DidSignOut); every provider when omitted.
        method SignOut(provider: ?string) -> (providers: []SignedOut)

        # The providers, their domains and sessions (expiry and times, never a token).
        method Status() -> (providers: []Provider)

        """ + ErrorDeclarations.idl(for: "io.cordon.Identity")
}
