import CordonIdentity
import CordonLifecycle
import CordonPolicy
import CordonProtocol
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
/// provider waits on that one flight; a due refresh is done first, and a refused refresh signs in
/// again. Sessions are sealed in the store under `["identity", generation]`; every issue, refresh,
/// denial and sign-out is audited (never a token).
final class IdentityComponent: AgentComponent {
    let methods: [Method] = [.identityGetToken, .identitySignIn, .identitySignOut, .identityStatus]

    /// What the audit log names a caller with no managed registration (the CLI, a script).
    static let cliAppId = "io.cordon.cli"

    unowned let host: any ComponentHost
    /// The identity key generation (`["identity", generation]`); a wipe moves to the next.
    var generation: Int
    /// The sign-in or refresh running for each provider, by name.
    var flights: [String: IdentityFlight] = [:]
    let transport = IdentityTransport()

    init(host: any ComponentHost) {
        self.host = host
        generation = (try? host.database.identityGeneration()) ?? 0
    }

    func serve(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        switch call.method {
        case .identityGetToken:
            let parameters = try call.parameters(IdentityTokenParameters.self)
            return try getToken(parameters.domain, call: call)
        case .identitySignIn:
            let parameters = try call.parameters(IdentityProviderParameters.self)
            return try signIn(parameters.provider, call: call)
        case .identitySignOut:
            let parameters = try call.parameters(IdentityProviderParameters.self)
            return try signOut(parameters.provider, call: call)
        default:
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
        let provider: ProviderConfiguration
        do {
            provider = try access(appId: appId, domain: domain)
            try checkUnlocked()
        } catch {
            audit(appId, "identity.token", outcome: "refused", reason: "\(domain): \(error.varlinkName)")
            throw error.varlinkError
        }
        let encoder = call.encoder
        let work = token(provider: provider, domain: domain)
        return .deferred(
            work.assumeIsolated().flatMap { [self] tokens -> EventLoopFuture<ByteBuffer> in
                let reply = encoder.reply(
                    IdentityTokenReply(
                        domain: domain, provider: provider.name, accessToken: tokens.accessToken,
                        tokenType: tokens.tokenType, expiresAt: tokens.expiresAt))
                return audit(
                    appId, "identity.token", outcome: "allow",
                    reason: "\(domain) from \(provider.name), expires at \(Int(tokens.expiresAt))"
                ).map { reply }
            }.flatMapError { [self] error -> EventLoopFuture<ByteBuffer> in
                let typed = Self.cordonError(error)
                let frame = encoder.error(typed.varlinkError)
                return audit(appId, "identity.token", outcome: "refused", reason: "\(domain): \(typed.varlinkName)")
                    .map { frame }
            }.nonisolated())
    }

    /// The provider that signs in for `domain`, when an access group gives `appId` that domain.
    func access(appId: String, domain: String) throws(CordonError) -> ProviderConfiguration {
        let policy = host.policy.policy
        guard let entry = policy[PolicyKeys.Identity.domains].value.first(where: { $0.domain == domain }) else {
            throw .identityUnknownDomain(domain: domain)
        }
        let groups = policy[PolicyKeys.Identity.accessGroups].value
        guard groups.contains(where: { $0.apps.contains(appId) && $0.domains.contains(domain) }) else {
            throw .identityNotInAccessGroup(appId: appId, domain: domain)
        }
        return try provider(named: entry.provider)
    }

    /// The provider `name` of the policy in force.
    func provider(named name: String) throws(CordonError) -> ProviderConfiguration {
        let entries = host.policy.policy[PolicyKeys.Identity.providers].value
        guard let entry = entries.first(where: { $0.name == name }) else {
            throw .identityUnknownProvider(provider: name, known: entries.map(\.name))
        }
        let configuration = ProviderConfiguration(
            name: entry.name, clientID: entry.clientID, scopes: entry.scopes,
            flow: entry.flow == .device ? .device : .authorizationCode,
            deviceAuthorizationEndpoint: entry.deviceAuthorizationEndpoint,
            authorizationEndpoint: entry.authorizationEndpoint, tokenEndpoint: entry.tokenEndpoint,
            revocationEndpoint: entry.revocationEndpoint)
        do {
            try configuration.validate()
        } catch {
            throw error.cordonError
        }
        return configuration
    }

    /// The domains the policy gives `provider`.
    func domains(of provider: String) -> [String] {
        host.policy.policy[PolicyKeys.Identity.domains].value.filter { $0.provider == provider }.map(\.domain)
    }

    /// Refuses unless the container is unlocked: no token and no sign-in while it is locked.
    func checkUnlocked() throws(CordonError) {
        let state = host.lifecycleState
        guard state == .unlocked else { throw .identityLocked(state: state.rawValue) }
    }

    /// The token of `domain`: the stored session's while valid, refreshed when due, or a sign-in
    /// (joined when one runs). Past the offline limits: `SessionExpired`, or the container wiped.
    private func token(provider: ProviderConfiguration, domain: String) -> EventLoopFuture<TokenSet> {
        readSession(provider: provider.name, domain: domain).assumeIsolated().flatMap {
            [self] session -> EventLoopFuture<TokenSet> in
            guard let session else { return flight(provider, refreshing: nil).future }
            let policy = host.policy.policy
            let limits = OfflineLimits(
                graceMinutes: policy[PolicyKeys.Identity.offlineGraceMinutes].value,
                wipeDays: policy[PolicyKeys.Identity.offlineWipeDays].value)
            switch session.status(at: host.clock(), limits: limits) {
            case .valid:
                return host.loop.makeSucceededFuture(session.tokens)
            case .refreshDue:
                return flight(provider, refreshing: session).future
            case .locallyAuthenticated:
                return flight(provider, refreshing: nil).future
            case .blocked:
                return host.loop.makeFailedFuture(CordonError.sessionExpired(provider: provider.name))
            case .wipe:
                offlineWipe(provider.name, days: limits.wipeDays ?? 0)
                return host.loop.makeFailedFuture(CordonError.sessionExpired(provider: provider.name))
            }
        }.nonisolated()
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
        switch event.kind {
        case .didLock, .encryptionKeyUnavailable:
            cancelFlights()
        case .wiped where event.appId == nil:
            cancelFlights()
            let database = host.database
            host.storePool.runIfActive(eventLoop: host.loop) { try database.resetIdentity() }.assumeIsolated()
                .whenComplete { [self] result in
                    switch result {
                    case .success(let next): generation = next
                    case .failure(let error): host.logger.error("could not delete the identity sessions: \(error)")
                    }
                }
        default:
            break
        }
    }

    func shutdown() { cancelFlights() }

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
        case nil: step = flight.signingIn ? .authorization : .refresh
        }
        audit(nil, "identity.signIn", outcome: "cancelled", reason: "\(flight.provider.name) at \(step.rawValue)")
        flight.finish(.failure(.signInCancelled(provider: flight.provider.name, step: step.rawValue)))
    }

    // MARK: Audit

    /// Audits an identity call (never a token).
    @discardableResult
    func audit(_ appId: String?, _ action: String, outcome: String, reason: String) -> EventLoopFuture<Void> {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "identity", appId: appId, action: action, outcome: outcome, reason: reason
            )
        ])
    }

    /// Any error of a flight or the pool as the typed error it answers.
    static func cordonError(_ error: any Error) -> CordonError {
        if let error = error as? CordonError { return error }
        if let error = error as? IdentityError { return error.cordonError }
        return .internalError(reason: "identity: \(error)")
    }
}
