import CordonIdentity
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore

/// The sealed sessions and CPA client credentials, and the ID token check before a session is
/// stored (docs/ARCHITECTURE.md, "Identity").
extension IdentityComponent {
    /// Stores what a flight got, then answers every waiter: an OpenID Connect provider's new ID
    /// token is verified first (a refusal stores nothing); OAuth tokens are sealed for every domain
    /// of the provider, a CPA token for its domain (with the user and domain names it carries).
    /// `previous` are the tokens refreshed or renewed, if any.
    func store(_ flight: IdentityFlight, tokens: TokenSet, signedInAt: Double?, previous: TokenSet?) {
        guard case .oauth(_, let oidc?) = flight.provider, let idToken = tokens.idToken,
            idToken != previous?.idToken
        else {
            seal(flight, tokens: tokens, signedInAt: signedInAt, user: tokens.userName)
            return
        }
        // An ID token from a refresh carries no nonce (OpenID Connect Core §12.2).
        verifyIDToken(idToken, flight: flight, oidc: oidc, nonce: previous == nil ? flight.nonce : nil)
            .assumeIsolated().whenComplete { [self] result in
                guard !flight.finished else { return }
                switch result {
                case .success(let claims):
                    audit(
                        nil, "identity.idToken", outcome: "allow",
                        reason: "\(flight.provider.name): the ID token verifies with the issuer's keys")
                    seal(
                        flight, tokens: tokens, signedInAt: signedInAt, user: claims.preferredUsername ?? claims.subject
                    )
                case .failure(let error):
                    fail(
                        flight,
                        error as? IdentityError ?? .invalidIDToken(provider: flight.provider.name, reason: "\(error)"))
                }
            }
    }

    /// The claims of `idToken` verified with `IDTokenVerifier` against the provider's JWKS: the
    /// one cached for the agent's life, fetched once when there is none, and fetched again once
    /// when no key of the cached set matches the token (the provider rotated its keys).
    private func verifyIDToken(_ idToken: String, flight: IdentityFlight, oidc: OIDCSettings, nonce: String?)
        -> EventLoopFuture<IDTokenClaims>
    {
        let name = flight.provider.name
        let verifier = IDTokenVerifier(provider: name, issuer: oidc.issuer, clientID: oidc.clientID)
        let cached = jwksCache[name].flatMap { $0.uri == oidc.jwksURI ? $0.keys : nil }
        let (transport, now) = (transport, host.clock())
        let work = host.loop.makeFutureWithTask { () async -> Result<(IDTokenClaims, [UInt8]), IdentityError> in
            do throws(IdentityError) {
                let keys: [UInt8]
                if let cached {
                    keys = cached
                } else {
                    keys = try await Self.fetchJWKS(oidc.jwksURI, provider: name, transport: transport)
                }
                do throws(IdentityError) {
                    return .success((try await verifier.verify(idToken, jwks: keys, nonce: nonce, now: now), keys))
                } catch .invalidIDToken(_, let reason) where reason == IDTokenVerifier.noMatchingKey && cached != nil {
                    let fresh = try await Self.fetchJWKS(oidc.jwksURI, provider: name, transport: transport)
                    return .success((try await verifier.verify(idToken, jwks: fresh, nonce: nonce, now: now), fresh))
                }
            } catch {
                return .failure(error)
            }
        }
        return work.assumeIsolated().flatMapThrowing { [self] result -> IDTokenClaims in
            let (claims, keys) = try result.get()
            jwksCache[name] = (oidc.jwksURI, keys)
            return claims
        }.nonisolated()
    }

    /// GETs the provider's JWKS (the transport's limits); a status other than 200 is a typed error.
    private static func fetchJWKS(_ uri: String, provider: String, transport: IdentityTransport)
        async throws(IdentityError) -> [UInt8]
    {
        let answer = try await transport.get(uri, provider: provider, step: .idToken)
        if answer.status >= 500 { throw .serverError(provider: provider, step: .idToken, status: answer.status) }
        guard answer.status == 200 else {
            throw .malformedResponse(
                provider: provider, step: .idToken, reason: "the JWKS answered HTTP \(answer.status)")
        }
        return answer.body
    }

    /// Seals `tokens` (replacing the rows: a refresh's rotated refresh token replaces the old) with
    /// the CPA client credentials a registration gave, then answers every waiter.
    private func seal(_ flight: IdentityFlight, tokens: TokenSet, signedInAt: Double?, user: String?) {
        let provider = flight.provider.name
        guard let key = host.purposeKey(["identity", String(generation)]) else {
            flight.finish(.failure(.identityLocked(state: host.lifecycleState.rawValue)))
            return
        }
        let sealer = RecordSealer(key: key)
        key.zero()
        let (database, generation, now) = (host.database, generation, host.clock())
        let domains = flight.domain.map { [$0] } ?? domains(of: provider)
        let refreshed = signedInAt != nil
        let client = flight.unsavedClient
        flight.unsavedClient = nil
        sessionCache.writing()
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws in
            if let client {
                try Self.storeClient(
                    client, provider: provider, sealer: sealer, generation: generation, database: database)
            }
            var plain = Array(try JSONEncoder().encode(tokens))
            defer { for index in plain.indices { plain[index] = 0 } }
            for domain in domains {
                let sealed = try sealer.seal(
                    plain, slot: StoredIdentitySession.slot(provider: provider, domain: domain))
                // A refresh without a new ID token keeps the user name the sign-in verified.
                let kept =
                    refreshed && user == nil
                    ? try database.identitySession(provider: provider, domain: domain)?.user : nil
                try database.storeIdentitySession(
                    StoredIdentitySession(
                        provider: provider, domain: domain, user: user ?? kept,
                        domainDisplayName: tokens.domainDisplayName, expiresAt: tokens.expiresAt,
                        signedInAt: signedInAt ?? now, confirmedAt: now, generation: generation, sealed: sealed))
            }
        }
        work.assumeIsolated().whenComplete { [self] result in
            sessionCache.writing()
            switch result {
            case .success:
                // The provider answered: no backoff holds its next renewal.
                renewalFailures[provider] = nil
                audit(
                    nil, refreshed ? "identity.refresh" : "identity.signIn", outcome: "allow",
                    reason: "\(provider): tokens for \(domains.joined(separator: ", ")) until \(Int(tokens.expiresAt))")
                flight.finish(.success(tokens))
            case .failure(let error):
                audit(nil, "identity.signIn", outcome: "failed", reason: "\(provider): the session was not stored")
                flight.finish(.failure(.internalError(reason: "identity: the session was not stored: \(error)")))
            }
        }
    }

    /// Stores the CPA client credentials a registration of `flight` gave when the sign-in ends
    /// without a token (they are the device's identity at the provider, whatever the outcome).
    func saveRegisteredClient(_ flight: IdentityFlight) {
        guard let client = flight.unsavedClient else { return }
        flight.unsavedClient = nil
        let provider = flight.provider.name
        guard let key = host.purposeKey(["identity", String(generation)]) else { return }
        let sealer = RecordSealer(key: key)
        key.zero()
        let (database, generation, logger) = (host.database, generation, host.logger)
        host.storePool.runIfActive(eventLoop: host.loop) { () throws in
            try Self.storeClient(client, provider: provider, sealer: sealer, generation: generation, database: database)
        }.whenFailure { _ in
            logger.error("could not store the CPA client credentials", metadata: ["provider": "\(provider)"])
        }
    }

    private static func storeClient(
        _ client: CPAClientCredentials, provider: String, sealer: RecordSealer, generation: Int,
        database: CordonDatabase
    ) throws {
        var plain = Array(try JSONEncoder().encode(client))
        defer { for index in plain.indices { plain[index] = 0 } }
        let sealed = try sealer.seal(plain, slot: StoredCPAClient.slot(provider: provider))
        try database.storeCPAClient(StoredCPAClient(provider: provider, generation: generation, sealed: sealed))
    }

    /// The CPA client credentials stored for `provider`, opened; nil when there are none or they
    /// do not open (sealed under an older generation: the device registers again).
    func readCPAClient(_ provider: String) -> EventLoopFuture<CPAClientCredentials?> {
        guard let key = host.purposeKey(["identity", String(generation)]) else {
            return host.loop.makeFailedFuture(CordonError.identityLocked(state: host.lifecycleState.rawValue))
        }
        let sealer = RecordSealer(key: key)
        key.zero()
        let (database, generation) = (host.database, generation)
        return host.storePool.runIfActive(eventLoop: host.loop) { () throws -> CPAClientCredentials? in
            guard let stored = try database.cpaClient(provider: provider), stored.generation == generation else {
                return nil
            }
            guard let opened = try? sealer.open(stored.sealed, slot: StoredCPAClient.slot(provider: provider)) else {
                return nil
            }
            defer { opened.zero() }
            return try? opened.withUnsafeBytes { try JSONDecoder().decode(CPAClientCredentials.self, from: Data($0)) }
        }
    }

    /// The stored session of `provider` for `domain`, opened; nil when there is none or it does
    /// not open (sealed under an older generation, changed on disk).
    func readSession(provider: String, domain: String) -> EventLoopFuture<IdentitySession?> {
        guard let sealer = currentSealer() else {
            return host.loop.makeFailedFuture(CordonError.identityLocked(state: host.lifecycleState.rawValue))
        }
        // A session kept on the loop is opened there: no thread hop, no database read.
        if let kept = sessionCache.session(provider: provider, domain: domain) {
            return host.loop.makeSucceededFuture(open(kept, sealer: sealer))
        }
        let (database, epoch) = (host.database, sessionCache.epoch)
        return host.storePool.runIfActive(eventLoop: host.loop) {
            try database.identitySession(provider: provider, domain: domain)
        }.assumeIsolated().map { [self] stored -> IdentitySession? in
            sessionCache.keep(stored, provider: provider, domain: domain, readAt: epoch)
            return stored.flatMap { open($0, sealer: sealer) }
        }.nonisolated()
    }

    /// The session kept on the loop for `provider` and `domain`, opened there; nil when none is
    /// kept, the identity key is not held, or it does not open.
    func keptSession(provider: String, domain: String) -> IdentitySession? {
        guard let kept = sessionCache.session(provider: provider, domain: domain), let sealer = currentSealer() else {
            return nil
        }
        return open(kept, sealer: sealer)
    }

    /// The sealer of this key generation's sessions, kept until the generation or the key goes;
    /// nil when the identity key is not held.
    private func currentSealer() -> RecordSealer? {
        if let openSealer, openSealer.generation == generation { return openSealer.sealer }
        guard let key = host.purposeKey(["identity", String(generation)]) else { return nil }
        let sealer = RecordSealer(key: key)
        key.zero()
        openSealer = (generation, sealer)
        return sealer
    }

    /// `stored` opened under `sealer`; nil when it does not open (sealed under an older
    /// generation, changed on disk).
    private func open(_ stored: StoredIdentitySession, sealer: RecordSealer) -> IdentitySession? {
        let (provider, domain) = (stored.provider, stored.domain)
        // Read straight from the bytes the sealer lends and zeroes, without JSONDecoder: the tokens
        // are plain strings once read anyway, so a locked copy (`SecureBytes`: an allocation, `mlock`
        // and `munlock` per call) bought nothing (docs/PERFORMANCE.md, "Data calls on the loop").
        let tokens = try? sealer.withOpened(
            stored.sealed, slot: StoredIdentitySession.slot(provider: provider, domain: domain)
        ) { bytes -> TokenSet? in
            if let node = try? JSONNodeParser.parse(bytes), let tokens = TokenSet(readingJSON: node) { return tokens }
            return try? JSONDecoder().decode(TokenSet.self, from: Data(bytes))
        }
        guard let tokens = tokens ?? nil else {
            host.logger.warning(
                "a stored identity session does not open; signing in again",
                metadata: ["provider": "\(provider)", "domain": "\(domain)"])
            return nil
        }
        return IdentitySession(
            provider: provider, domain: domain, tokens: tokens, signedInAt: stored.signedInAt,
            confirmedAt: stored.confirmedAt)
    }
}
