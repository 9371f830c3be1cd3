import CordonIdentity
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore

/// The identity broker (`io.cordon.Identity`, docs/ARCHITECTURE.md "Identity"): OAuth 2.0 access
/// tokens per domain for the verified managed apps of the domain's access group, one sign-in for
/// every app of the group.
///
/// A token goes only to a verified managed registration (the gates of Storage and Tokens) that an
/// access group of `identity.accessGroups` pairs with the domain, only while the container is
/// unlocked. Without a session, `GetToken` starts the provider's sign-in and every call for the
/// provider waits on that one flight; a token that is still valid is answered at once and a due
/// refresh runs beside it; a failed renewal holds the next one back (jittered exponential
/// backoff), and a refused refresh signs in again. Sessions are sealed in the store under
/// `["identity", generation]`; every issue, refresh, denial and sign-out is audited (never a token).
final class IdentityComponent: InterfaceComponent {
    /// What the audit log names a caller with no managed registration (the CLI, a script).
    static let cliAppId = "io.cordon.cli"

    unowned let host: any ComponentHost
    /// The identity key generation (`["identity", generation]`); a wipe moves to the next.
    var generation: Int
    /// The sign-in or refresh running for each provider, by name.
    var flights: [String: IdentityFlight] = [:]
    /// The sealer of ``generation`` that reads sessions (`readSession`), derived once while
    /// unlocked rather than on every `GetToken`: dropped on a lock, on revocation, on a wipe and
    /// when the generation moves on.
    var openSealer: (generation: Int, sealer: RecordSealer)?
    /// The sealed sessions `GetToken` read, so that a valid token is answered on the loop.
    var sessionCache = IdentitySessionCache()
    let transport = IdentityTransport()
    /// Each OpenID Connect provider's JWKS (its URI and bytes), kept for the agent's life once it
    /// verified an ID token; fetched again once when no key of it matches a token.
    var jwksCache: [String: (uri: String, keys: [UInt8])] = [:]
    /// Each OpenID provider's discovered endpoints (with the issuer they are for), kept for the
    /// agent's life once a document validated; forgotten when the policy changes.
    var discovered: [String: (issuer: String, endpoints: ProviderEndpoints)] = [:] {
        didSet { builtProviders = ("", [:]) }
    }
    /// The providers built for the policy of `version`, by name (`provider(named:)`).
    var builtProviders: (version: String, providers: [String: ConfiguredProvider]) = ("", [:])
    /// The discovery fetch running for each provider (single flight), by name.
    var discoveryFetches: [String: (issuer: String, result: DiscoveryResult)] = [:]
    /// Each provider's renewals that failed in a row since the last success, with the backoff
    /// they set (`IdentityComponent+Renewal.swift`), by name.
    var renewalFailures: [String: RenewalFailures] = [:]
    /// What a discovery fetch ends with: the endpoints its document names, or why it was refused.
    typealias DiscoveryResult = EventLoopFuture<Result<ProviderEndpoints, IdentityError>>

    init(host: any ComponentHost) {
        self.host = host
        generation = (try? host.database.identityGeneration()) ?? 0
    }

    func serve(_ method: Method.Identity, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        switch method {
        case .getToken:
            let parameters = try call.parameters(IdentityTokenParameters.self)
            return try getToken(parameters.domain, call: call)
        case .signIn:
            let parameters = try call.parameters(IdentityProviderParameters.self)
            return try signIn(parameters.provider, call: call)
        case .signOut:
            let parameters = try call.parameters(IdentityProviderParameters.self)
            return try signOut(parameters.provider, call: call)
        case .status:
            return status(encoder: call.encoder)
        }
    }

    // MARK: GetToken

    private func getToken(_ domain: String, call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        // Only a verified managed registration gets a token (docs/THREAT-MODEL.md, "Identity").
        let registration: AppRegistration
        do {
            registration = try host.verifiedRegistration(call.connection, for: .data)
        } catch {
            audit(nil, "identity.token", outcome: "refused", reason: "\(domain): \(error.varlinkName)")
            throw error.varlinkError
        }
        let appId = registration.appId
        let provider: ConfiguredProvider
        do {
            provider = try access(appId: appId, domain: domain)
            try checkUnlocked()
        } catch {
            audit(appId, "identity.token", outcome: "refused", reason: "\(domain): \(error.varlinkName)")
            throw error.varlinkError
        }
        let encoder = call.encoder
        // A valid token kept on the loop is answered in this turn, as a held code is: no future.
        if let session = keptValidSession(provider: provider, domain: domain) {
            let (reply, record) = tokenReply(session.tokens, domain: domain, provider: provider, appId: appId, encoder)
            guard let full = host.auditAfterReply([record]) else { return .reply(reply) }
            return .deferred(full.map { reply })
        }
        let work = token(provider: provider, domain: domain)
        return .deferred(
            work.assumeIsolated().flatMap { [self] answer -> EventLoopFuture<ByteBuffer> in
                let (reply, record) = tokenReply(
                    answer.tokens, domain: domain, provider: provider, appId: appId, encoder)
                let replied = (host.auditAfterReply([record]) ?? host.loop.makeSucceededVoidFuture()).map { reply }
                if let due = answer.renewal {
                    // The renewal due beside the token starts on the loop's next turn, once the
                    // reply (completed with this future, in the same turn) is written: its work
                    // does not hold the answer back.
                    replied.assumeIsolated().whenComplete { [self] _ in
                        host.loop.assumeIsolated().execute { [self] in
                            renewInBackground(provider, domain: domain, session: due)
                        }
                    }
                }
                return replied
            }.flatMapError { [self] error -> EventLoopFuture<ByteBuffer> in
                let typed = Self.cordonError(error)
                let frame = encoder.error(typed.varlinkError)
                return audit(appId, "identity.token", outcome: "refused", reason: "\(domain): \(typed.varlinkName)")
                    .map { frame }
            }.nonisolated())
    }

    /// The reply giving `tokens` to `appId`, and its audit record: a routine read, journaled and
    /// stored after the reply (docs/RELIABILITY.md, "Audit"; a killed agent loses none).
    private func tokenReply(
        _ tokens: TokenSet, domain: String, provider: ConfiguredProvider, appId: String, _ encoder: ReplyEncoder
    ) -> (reply: ByteBuffer, record: AuditEntry) {
        let reply = encoder.reply(
            IdentityTokenReply(
                domain: domain, provider: provider.name, accessToken: tokens.accessToken,
                tokenType: tokens.tokenType, expiresAt: tokens.expiresAt))
        let record = AuditEntry(
            time: host.clock(), category: "identity", appId: appId, action: "identity.token",
            outcome: "allow", reason: "\(domain) from \(provider.name), expires at \(Int(tokens.expiresAt))")
        return (reply, record)
    }

    /// The session kept on the loop for `domain` when it answers a call at once: it opens, its
    /// token is valid with no renewal due, and no CPA flight for another domain runs. Nil sends
    /// the call the long way (``token(provider:domain:)``), which handles every other case.
    private func keptValidSession(provider: ConfiguredProvider, domain: String) -> IdentitySession? {
        if case .cpa = provider, let running = flights[provider.name], running.domain != domain { return nil }
        guard let session = keptSession(provider: provider.name, domain: domain),
            case .valid = session.status(at: host.clock(), limits: offlineLimits)
        else { return nil }
        return session
    }

    /// The policy's offline limits (`identity.offlineGraceMinutes`, `identity.offlineWipeDays`).
    private var offlineLimits: OfflineLimits {
        let policy = host.policy.policy
        return OfflineLimits(
            graceMinutes: policy[PolicyKeys.Identity.offlineGraceMinutes].value,
            wipeDays: policy[PolicyKeys.Identity.offlineWipeDays].value)
    }

    /// The provider that signs in for `domain` (an `identity.domains` entry, else the CPA provider
    /// that lists it), when an access group gives `appId` that domain.
    func access(appId: String, domain: String) throws(CordonError) -> ConfiguredProvider {
        let policy = host.policy.policy
        let named =
            policy[PolicyKeys.Identity.domains].value.first(where: { $0.domain == domain })?.provider
            ?? policy[PolicyKeys.Identity.cpaProviders].value.first(where: { $0.domains.contains(domain) })?.name
        guard let named else { throw .identityUnknownDomain(domain: domain) }
        let groups = policy[PolicyKeys.Identity.accessGroups].value
        guard groups.contains(where: { $0.apps.contains(appId) && $0.domains.contains(domain) }) else {
            throw .identityNotInAccessGroup(appId: appId, domain: domain)
        }
        return try provider(named: named)
    }

    /// The names of every provider of the policy in force, OAuth then CPA.
    var providerNames: [String] {
        let policy = host.policy.policy
        return policy[PolicyKeys.Identity.providers].value.map(\.name)
            + policy[PolicyKeys.Identity.cpaProviders].value.map(\.name)
    }

    /// The provider `name` of the policy in force, built once per policy version (and again once
    /// its discovery document is in): each `GetToken` would otherwise check its endpoints again.
    func provider(named name: String) throws(CordonError) -> ConfiguredProvider {
        let version = host.policy.versionHash
        if builtProviders.version == version, let built = builtProviders.providers[name] { return built }
        let made = try makeProvider(named: name)
        if case .discovering = made { return made }
        if builtProviders.version != version { builtProviders = (version, [:]) }
        builtProviders.providers[name] = made
        return made
    }

    private func makeProvider(named name: String) throws(CordonError) -> ConfiguredProvider {
        let policy = host.policy.policy
        do throws(IdentityError) {
            if let entry = policy[PolicyKeys.Identity.providers].value.first(where: { $0.name == name }) {
                let explicit = Self.endpoints(of: entry)
                guard let issuer = entry.issuer, OpenIDDiscovery.isNeeded(explicit, flow: Self.flow(of: entry)) else {
                    return try Self.oauthProvider(entry, endpoints: explicit)
                }
                // What the issuer's discovery document gave, once, for the agent's life.
                guard let cached = discovered[name], cached.issuer == issuer else { return .discovering(entry) }
                return try Self.oauthProvider(entry, endpoints: explicit.filled(from: cached.endpoints))
            }
            if let entry = policy[PolicyKeys.Identity.cpaProviders].value.first(where: { $0.name == name }) {
                let configuration = CPAProviderConfiguration(
                    name: entry.name, baseURL: entry.baseURL, domains: entry.domains)
                try configuration.validate()
                return .cpa(configuration, mode: entry.mode == .client ? .client : .user)
            }
        } catch {
            throw error.cordonError
        }
        throw .identityUnknownProvider(provider: name, known: providerNames)
    }

    /// The domains the policy gives `provider`: its `identity.domains` entries, and a CPA
    /// provider's own list.
    func domains(of provider: String) -> [String] {
        let policy = host.policy.policy
        var domains = policy[PolicyKeys.Identity.domains].value.filter { $0.provider == provider }.map(\.domain)
        for entry in policy[PolicyKeys.Identity.cpaProviders].value where entry.name == provider {
            domains += entry.domains.filter { !domains.contains($0) }
        }
        return domains
    }

    /// Whether `session` can be renewed without the user: a refresh token, or a CPA provider's
    /// stored client credentials (read by the flight).
    func canRenew(_ provider: ConfiguredProvider, _ session: IdentitySession) -> Bool {
        if case .cpa = provider { return true }
        return session.tokens.refreshToken != nil
    }

    /// Refuses unless the container is unlocked: no token and no sign-in while it is locked.
    func checkUnlocked() throws(CordonError) {
        let state = host.lifecycleState
        guard state == .unlocked else { throw .identityLocked(state: state.rawValue) }
    }

    /// The token of `domain`: the stored session's while it is valid, answered at once even when
    /// a refresh or renewal is due, which then runs beside it (`renewal`: the session that
    /// `getToken` renews with `renewInBackground` once the reply is written); once expired,
    /// a refresh (joined when one runs) or a sign-in. Half-way through `offlineGraceMinutes`
    /// since the provider last answered, a renewal runs beside the valid token; past it, a
    /// renewal is tried first and only the tokens it brings are given (else `SessionExpired`).
    /// While a failed renewal's backoff holds, no renewal is tried: an expired token's call gets
    /// the failure's error at once, a call past the grace `SessionExpired`
    /// (docs/components/identity.md, "Background renewal and backoff"). Past `offlineWipeDays`:
    /// the container wiped.
    /// A CPA provider's flight is for one domain: a call for another domain waits for it to end,
    /// then renews with the client credentials (single sign-on once the device is paired).
    private func token(provider: ConfiguredProvider, domain: String)
        -> EventLoopFuture<(tokens: TokenSet, renewal: IdentitySession?)>
    {
        readSession(provider: provider.name, domain: domain).assumeIsolated().flatMap {
            [self] session -> EventLoopFuture<(tokens: TokenSet, renewal: IdentitySession?)> in
            if case .cpa = provider, let running = flights[provider.name], running.domain != domain {
                return running.future.assumeIsolated().flatMap { [self] _ in token(provider: provider, domain: domain) }
                    .nonisolated()
            }
            guard let session else { return Self.answer(flight(provider, domain: domain, refreshing: nil).future) }
            let limits = offlineLimits
            let now = host.clock()
            switch session.status(at: now, limits: limits) {
            case .valid:
                return host.loop.makeSucceededFuture((session.tokens, nil))
            case .renewalDue, .refreshDue, .locallyAuthenticated:
                if now < session.tokens.expiresAt { return host.loop.makeSucceededFuture((session.tokens, session)) }
                return Self.answer(renewExpired(provider, domain: domain, session: session))
            case .blocked:
                return Self.answer(renewBlocked(provider, domain: domain, session: session))
            case .wipe:
                offlineWipe(provider.name, days: limits.wipeDays ?? 0)
                return host.loop.makeFailedFuture(CordonError.sessionExpired(provider: provider.name))
            }
        }.nonisolated()
    }

    /// The tokens a flight brings, with no renewal due beside them.
    private static func answer(_ tokens: EventLoopFuture<TokenSet>)
        -> EventLoopFuture<(tokens: TokenSet, renewal: IdentitySession?)>
    {
        tokens.map { ($0, nil) }
    }

    /// `identity.offlineWipeDays` passed: the container is wiped (the same path as a policy
    /// condition's `wipe`), audited first.
    private func offlineWipe(_ provider: String, days: Int) {
        audit(
            nil, "identity.offlineWipe", outcome: "wiped",
            reason: "\(provider): no contact with the provider for \(days) days (identity.offlineWipeDays)")
        host.logger.critical("identity.offlineWipeDays wipes the container", metadata: ["provider": "\(provider)"])
        host.run(.forceWipe(reason: .policy, now: host.clock()))
    }

    // MARK: Events

    /// A lock cancels every sign-in (a waiting app hears `SignInCancelled`); a full wipe also
    /// forgets every session and moves to a new key generation.
    func observe(_ event: CordonEvent) {
        switch event.payload {
        case .didLock, .encryptionKeyUnavailable:
            openSealer = nil
            sessionCache.writing()
            cancelFlights()
        case .policyDidChange:
            // The next sign-in discovers again, for the issuer and endpoints now in force, and
            // the next renewal is tried at once (the endpoints may have moved).
            discovered = [:]
            renewalFailures = [:]
        case .wiped(appId: nil):
            openSealer = nil
            sessionCache.writing()
            renewalFailures = [:]
            cancelFlights()
            let database = host.database
            host.storePool.runIfActive(eventLoop: host.loop) { try database.resetIdentity() }.assumeIsolated()
                .whenComplete { [self] result in
                    sessionCache.writing()
                    switch result {
                    case .success(let next): generation = next
                    case .failure(let error): host.logger.error("could not delete the identity sessions: \(error)")
                    }
                }
        default:
            break
        }
    }

    func shutdown() {
        openSealer = nil
        cancelFlights()
    }

    /// Ends every flight with `SignInCancelled`.
    func cancelFlights() {
        let running = flights
        flights = [:]
        for flight in running.values { cancel(flight) }
    }

    /// Ends `flight` as cancelled (its machine says at which step).
    func cancel(_ flight: IdentityFlight) {
        let step: IdentityStep
        switch flight.machine {
        case .device(let grant): step = grant.phase == .awaitingDeviceCode ? .deviceAuthorization : .token
        case .code(let flow): step = flow.phase == .awaitingToken ? .token : .authorization
        case .cpa(let signIn): step = signIn.step
        case nil where flight.discovering: step = .discovery
        case nil: step = flight.signingIn ? .authorization : .refresh
        }
        audit(nil, "identity.signIn", outcome: "cancelled", reason: "\(flight.provider.name) at \(step.rawValue)")
        saveRegisteredClient(flight)
        flight.finish(.failure(.signInCancelled(provider: flight.provider.name, step: step.rawValue)))
    }

    // MARK: Audit

    /// Audits an identity call (never a token).
    @discardableResult
    func audit(_ appId: String?, _ action: String, outcome: String, reason: String) -> EventLoopFuture<Void> {
        host.writeAudit(
            [
                AuditEntry(
                    time: host.clock(), category: "identity", appId: appId, action: action, outcome: outcome,
                    reason: reason)
            ], onDisk: true)
    }

    /// Any error of a flight or the pool as the typed error it answers.
    static func cordonError(_ error: any Error) -> CordonError {
        if let error = error as? CordonError { return error }
        if let error = error as? IdentityError { return error.cordonError }
        return .internalError(reason: "identity: \(error)")
    }
}
