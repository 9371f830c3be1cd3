import CordonIdentity
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore

/// `SignIn`, `SignOut` and `Status` (docs/ARCHITECTURE.md, "Identity").
extension IdentityComponent {
    /// Signs in to `name` (the only provider when nil), joining the flight that runs; a CPA provider
    /// signs in for its first domain (a paired device then gets user tokens for every domain).
    /// With `more`, the device prompt is streamed first, then the outcome (never a token).
    func signIn(_ name: String?, call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let configuration = try typed { () throws(CordonError) in
            let named: String
            if let name { named = name } else { named = try onlyProvider() }
            let chosen = try self.provider(named: named)
            try checkUnlocked()
            return chosen
        }
        let caller = host.registry.registrations[call.connection.id]?.appId ?? Self.cliAppId
        audit(caller, "identity.signIn", outcome: "asked", reason: configuration.name)
        let flight = flight(configuration, domain: nil, refreshing: nil)
        let (encoder, providerName) = (call.encoder, configuration.name)
        let outcome = flight.future.map { tokens in
            encoder.reply(IdentitySignInReply(provider: providerName, expiresAt: tokens.expiresAt))
        }.recover { encoder.error(Self.cordonError($0).varlinkError) }
        guard call.header.more else { return .deferred(outcome) }
        let subscriber = Subscriber(connection: call.connection, capacity: host.configuration.limits.maxQueuedEvents)
        let show: (DeviceCodePrompt) -> Void = { [host] prompt in
            let shown = IdentityPrompt(
                provider: prompt.provider, userCode: prompt.userCode, verificationURI: prompt.verificationURI,
                verificationURIComplete: prompt.verificationURIComplete, expiresAt: prompt.expiresAt)
            host.deliver(
                encoder.reply(IdentitySignInReply(provider: prompt.provider, prompt: shown), continues: true),
                to: subscriber)
        }
        if let prompt = flight.prompt { show(prompt) }
        flight.promptWatchers.append(show)
        outcome.assumeIsolated().whenSuccess { [host] frame in host.deliver(frame, to: subscriber) }
        return .streaming
    }

    /// The one provider of the policy, or `UnknownProvider` listing them.
    private func onlyProvider() throws(CordonError) -> String {
        let names = providerNames
        guard names.count == 1 else { throw .identityUnknownProvider(provider: "", known: names) }
        return names[0]
    }

    /// Signs out of `name` (every provider with a session when nil): its flight cancelled, its
    /// tokens revoked at the provider (RFC 7009) when it has a revocation endpoint and the key is
    /// held, its sessions and CPA client credentials deleted, audited, and every app told with
    /// `DidSignOut`.
    func signOut(_ name: String?, call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let configured = providerNames
        if let name, !configured.contains(name) {
            throw CordonError.identityUnknownProvider(provider: name, known: configured).varlinkError
        }
        let caller = host.registry.registrations[call.connection.id]?.appId ?? Self.cliAppId
        let encoder = call.encoder
        let database = host.database
        let stored = host.storePool.runIfActive(eventLoop: host.loop) { try database.identitySessions() }
        let work = stored.assumeIsolated().flatMap { [self] sessions -> EventLoopFuture<[IdentitySignedOut]> in
            let withSessions = Set(sessions.map(\.provider))
            let names = name.map { [$0] } ?? configured.filter { withSessions.contains($0) || flights[$0] != nil }
            var results: [EventLoopFuture<IdentitySignedOut>] = []
            for provider in names {
                renewalFailures[provider] = nil
                if let flight = flights[provider] {
                    flights[provider] = nil
                    cancel(flight)
                }
                results.append(signOut(provider, session: sessions.first { $0.provider == provider }, caller: caller))
            }
            return EventLoopFuture.whenAllSucceed(results, on: host.loop)
        }.nonisolated()
        return .deferred(
            work.map { encoder.reply(IdentitySignOutReply(providers: $0)) }.recover {
                encoder.error(Self.cordonError($0).varlinkError)
            })
    }

    private func signOut(_ provider: String, session: StoredIdentitySession?, caller: String)
        -> EventLoopFuture<IdentitySignedOut>
    {
        let revocation = revoke(provider, session: session)
        let database = host.database
        return revocation.assumeIsolated().flatMap { [self] problem -> EventLoopFuture<IdentitySignedOut> in
            sessionCache.writing()
            return host.storePool.runIfActive(eventLoop: host.loop) {
                try database.removeIdentitySessions(provider: provider)
            }
            .assumeIsolated().always { [self] _ in sessionCache.writing() }
            .map { [self] (removed: Int) -> IdentitySignedOut in
                let revoked = session != nil && problem == nil
                audit(
                    caller, "identity.signOut", outcome: "allow",
                    reason: "\(provider): \(removed) sessions deleted; "
                        + (revoked ? "revoked at the provider" : "not revoked: \(problem ?? "no session")"))
                if removed > 0 { host.run(.signedOut(provider: provider, now: host.clock())) }
                return IdentitySignedOut(
                    provider: provider, sessions: removed, revoked: revoked,
                    revocationProblem: session == nil ? nil : problem)
            }.nonisolated()
        }.nonisolated()
    }

    /// Revokes the refresh token then the access token of `session` (RFC 7009 §2.1); a problem
    /// in words, or nil when the provider accepted both.
    private func revoke(_ name: String, session: StoredIdentitySession?) -> EventLoopFuture<String?> {
        guard let session else { return host.loop.makeSucceededFuture("no session") }
        guard let configured = try? self.provider(named: name) else {
            return host.loop.makeSucceededFuture("the provider is not usable")
        }
        if case .cpa = configured { return host.loop.makeSucceededFuture("CPA 1.0 has no revocation") }
        // An OpenID provider's revocation endpoint may come from its discovery document.
        return resolved(configured).assumeIsolated().flatMap { [self] result -> EventLoopFuture<String?> in
            switch result {
            case .failure(let error): return host.loop.makeSucceededFuture(error.cause)
            case .success(let provider): return revoke(name, session: session, provider: provider.oauth)
            }
        }.nonisolated()
    }

    private func revoke(_ name: String, session: StoredIdentitySession, provider: ProviderConfiguration?)
        -> EventLoopFuture<String?>
    {
        guard let provider, provider.revocationEndpoint != nil else {
            return host.loop.makeSucceededFuture("the provider has no revocation endpoint")
        }
        guard let key = host.purposeKey(["identity", String(session.generation)]) else {
            return host.loop.makeSucceededFuture("the container's key is not held")
        }
        let sealer = RecordSealer(key: key)
        key.zero()
        let tokens: TokenSet
        do {
            let opened = try sealer.open(
                session.sealed, slot: StoredIdentitySession.slot(provider: name, domain: session.domain))
            defer { opened.zero() }
            tokens = try opened.withUnsafeBytes { try JSONDecoder().decode(TokenSet.self, from: Data($0)) }
        } catch {
            return host.loop.makeSucceededFuture("the stored session does not open")
        }
        var requests: [ProviderRequest] = []
        if let refresh = tokens.refreshToken, let request = provider.revocationRequest(refresh, hint: "refresh_token") {
            requests.append(request)
        }
        if let request = provider.revocationRequest(tokens.accessToken, hint: "access_token") {
            requests.append(request)
        }
        let (transport, outgoing) = (self.transport, requests)
        return host.loop.makeFutureWithTask { () async -> String? in
            for request in outgoing {
                do throws(IdentityError) {
                    let answer = try await transport.post(request, provider: name)
                    // RFC 7009 §2.2: 200 whether or not the token was valid.
                    guard answer.status == 200 else { return "the provider answered HTTP \(answer.status)" }
                } catch {
                    return error.cause
                }
            }
            return nil
        }
    }

    /// Every provider of the policy, its domains and stored sessions (never a token).
    func status(encoder: ReplyEncoder) -> CallOutcome {
        let database = host.database
        let providers = providerNames.compactMap { try? provider(named: $0) }
        let domains = Dictionary(providers.map { ($0.name, self.domains(of: $0.name)) }) { first, _ in first }
        let running = Set(flights.keys)
        let endpoints = Dictionary(providers.map { ($0.name, shownEndpoints($0)) }) { first, _ in first }
        let work = host.storePool.runIfActive(eventLoop: host.loop) { try database.identitySessions() }
        return .deferred(
            work.map { sessions in
                let statuses = providers.map { provider in
                    IdentityProviderStatus(
                        name: provider.name, flow: provider.flowName, domains: domains[provider.name] ?? [],
                        signingIn: running.contains(provider.name),
                        sessions: sessions.filter { $0.provider == provider.name }.map {
                            IdentitySessionStatus(
                                domain: $0.domain, user: $0.user, domainDisplayName: $0.domainDisplayName,
                                expiresAt: $0.expiresAt, signedInAt: $0.signedInAt, confirmedAt: $0.confirmedAt)
                        }, endpoints: endpoints[provider.name] ?? nil)
                }
                return encoder.reply(IdentityStatusReply(providers: statuses))
            }.recover { encoder.error(Self.cordonError($0).varlinkError) })
    }

    /// The endpoints `Status` shows for an OAuth provider: the policy's, filled from the discovery
    /// document once it was read (with its URL); nil for CPA.
    private func shownEndpoints(_ provider: ConfiguredProvider) -> IdentityEndpoints? {
        switch provider {
        case .cpa: return nil
        case .discovering(let entry):
            return IdentityEndpoints(
                deviceAuthorization: entry.deviceAuthorizationEndpoint, authorization: entry.authorizationEndpoint,
                token: entry.tokenEndpoint, revocation: entry.revocationEndpoint, jwks: entry.jwksURI)
        case .oauth(let configuration, let oidc):
            return IdentityEndpoints(
                deviceAuthorization: configuration.deviceAuthorizationEndpoint,
                authorization: configuration.authorizationEndpoint, token: configuration.tokenEndpoint,
                revocation: configuration.revocationEndpoint, jwks: oidc?.jwksURI,
                discovery: discovered[provider.name].map { OpenIDDiscovery.configurationURL(issuer: $0.issuer) })
        }
    }
}
