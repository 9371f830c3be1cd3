import CordonProtocol
import Foundation

/// The identity broker (`io.cordon.Identity`, docs/ARCHITECTURE.md "Identity"): OAuth 2.0 access
/// tokens for a domain, shared by the apps of the domain's access group; the agent signs in when
/// needed (once, however many apps wait) and keeps the tokens sealed in the container.
///
/// ```swift
/// let token = try await app.identity.token(for: "mail.corp.example")
/// request.setValue("Bearer \(token.accessToken)", forHTTPHeaderField: "Authorization")
///
/// // The logout handler: the user signed out (`cordon logout --identity`, `signOut()`).
/// for await event in app.events where event.kind == .didSignOut {
///     dropCachedTokens(provider: event.provider)
/// }
/// ```
/// Errors are `CordonError`: `identityNotInAccessGroup`, `identityUnknownDomain`,
/// `identityLocked`, `signInCancelled`, `signInExpired`, `signInFailed`, `sessionExpired`.
public struct Identity: Sendable {
    /// The registered app whose calls these are.
    public let app: CordonApp

    public init(app: CordonApp) {
        self.app = app
    }

    /// An access token for `domain`. Without a session the agent signs in first and this call
    /// waits for it (a device sign-in's code is shown by `cordon login`, or by ``signIn(provider:prompt:)``).
    public func token(for domain: String) async throws -> IdentityTokenReply {
        try await app.control.call(
            .identityGetToken, IdentityTokenParameters(domain: domain), returning: IdentityTokenReply.self)
    }

    /// Signs in to `provider` (the only one when nil), or joins the sign-in running; `prompt`
    /// gets the device sign-in's user code and verification URI to show. Returns when signed in.
    @discardableResult
    public func signIn(provider: String? = nil, prompt: (@Sendable (IdentityPrompt) -> Void)? = nil) async throws
        -> IdentitySignInReply
    {
        try await Self.signIn(socketPath: app.socketPath, provider: provider, prompt: prompt)
    }

    /// Signs out of `provider` (every provider when nil): revoked at the provider where it can
    /// be, deleted, and every app hears `DidSignOut`.
    @discardableResult
    public func signOut(provider: String? = nil) async throws -> [IdentitySignedOut] {
        try await app.control.call(
            .identitySignOut, IdentityProviderParameters(provider: provider), returning: IdentitySignOutReply.self
        ).providers
    }

    /// The providers, their domains and sessions (expiry, never a token).
    public func status() async throws -> [IdentityProviderStatus] {
        try await app.control.call(.identityStatus, NoParameters(), returning: IdentityStatusReply.self).providers
    }

    /// `SignIn` with `more` on a connection of its own (a streamed call ends its connection).
    static func signIn(socketPath: String, provider: String?, prompt: (@Sendable (IdentityPrompt) -> Void)?)
        async throws -> IdentitySignInReply
    {
        let connection = try await VarlinkClientConnection.connect(path: socketPath)
        do {
            let replies = try connection.stream(.identitySignIn, IdentityProviderParameters(provider: provider))
            for try await message in replies {
                let reply = try connection.decode(IdentitySignInReply.self, from: message)
                if let shown = reply.prompt {
                    prompt?(shown)
                    continue
                }
                await connection.close()
                return reply
            }
            throw CordonClientError.connectionClosed
        } catch {
            await connection.close()
            throw error
        }
    }
}

extension CordonApp {
    /// The identity broker for this app.
    public var identity: Identity { Identity(app: self) }
}

extension CordonClient {
    /// Signs in to `provider` (the only one when nil), or joins the sign-in running (an app's
    /// `GetToken` may have started it); `prompt` gets the device sign-in's code to show.
    @discardableResult
    public func signIn(provider: String? = nil, prompt: (@Sendable (IdentityPrompt) -> Void)? = nil) async throws
        -> IdentitySignInReply
    {
        try await Identity.signIn(socketPath: socketPath, provider: provider, prompt: prompt)
    }

    /// Signs out of `provider` (every provider when nil).
    @discardableResult
    public func signOut(provider: String? = nil) async throws -> [IdentitySignedOut] {
        try await connection.call(
            .identitySignOut, IdentityProviderParameters(provider: provider), returning: IdentitySignOutReply.self
        ).providers
    }

    /// The identity providers, their domains and sessions (never a token).
    public func identityStatus() async throws -> [IdentityProviderStatus] {
        try await connection.call(.identityStatus, NoParameters(), returning: IdentityStatusReply.self).providers
    }
}
