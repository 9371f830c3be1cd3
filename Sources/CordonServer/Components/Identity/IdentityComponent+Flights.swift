import CordonIdentity
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore

/// Sign-ins and refreshes (docs/ARCHITECTURE.md, "Identity"): one flight per provider that every
/// caller joins; the state machines of `CordonIdentity` decide, this drives them (HTTP through
/// `IdentityTransport`, the waits on the loop, the loopback listener, the browser).
extension IdentityComponent {
    /// The flight running for `provider`, or a new one: for OAuth, a refresh of `session` when it
    /// has a refresh token, else a sign-in; for CPA, a renewal with the stored client credentials,
    /// else a sign-in, for `domain` (the provider's first when nil).
    func flight(_ provider: ConfiguredProvider, domain: String?, refreshing session: IdentitySession?)
        -> IdentityFlight
    {
        if let running = flights[provider.name] { return running }
        var flightDomain: String?
        if case .cpa(let configuration, _) = provider { flightDomain = domain ?? configuration.domains.first }
        let flight = IdentityFlight(provider: provider, domain: flightDomain, loop: host.loop)
        flights[provider.name] = flight
        flight.future.assumeIsolated().whenComplete { [self] _ in
            if flights[provider.name] === flight { flights[provider.name] = nil }
        }
        switch provider {
        case .oauth(let configuration, _):
            startOAuth(flight, configuration, session: session)
        case .discovering:
            discoverThenStart(flight, session: session)
        case .cpa(let configuration, let mode):
            renewCPA(flight, configuration, mode: mode, domain: flightDomain ?? "", session: session)
        }
        return flight
    }

    /// A refresh of `session` when it has a refresh token, else a sign-in.
    private func startOAuth(_ flight: IdentityFlight, _ configuration: ProviderConfiguration, session: IdentitySession?)
    {
        if let session, let refreshToken = session.tokens.refreshToken {
            refresh(flight, configuration, session: session, refreshToken: refreshToken)
        } else {
            startSignIn(flight)
        }
    }

    /// Discovers the endpoints of the flight's OpenID provider, then starts as `startOAuth`. A
    /// document that is refused fails the flight with its typed error (step `discovery`), storing
    /// nothing; a refresh whose token has not expired yet keeps it in use, as an unreachable
    /// provider does.
    private func discoverThenStart(_ flight: IdentityFlight, session: IdentitySession?) {
        flight.discovering = true
        flight.signingIn = session?.tokens.refreshToken == nil
        resolved(flight.provider).assumeIsolated().whenSuccess { [self] result in
            guard !flight.finished else { return }
            flight.discovering = false
            switch result {
            case .success(let provider):
                flight.provider = provider
                guard case .oauth(let configuration, _) = provider else { return }
                startOAuth(flight, configuration, session: session)
            case .failure(let error):
                if let session, !flight.signingIn, host.clock() < session.tokens.expiresAt {
                    audit(nil, "identity.refresh", outcome: "failed", reason: error.description)
                    renewalFailed(flight.provider.name, error)
                    flight.finish(.success(session.tokens))
                } else {
                    fail(flight, error)
                }
            }
        }
    }

    /// Starts the OAuth provider's flow: the device grant, or the code flow once the listener
    /// listens (with a `nonce` when the provider's ID tokens are verified).
    func startSignIn(_ flight: IdentityFlight) {
        guard case .oauth(let provider, let oidc) = flight.provider else { return }
        flight.signingIn = true
        audit(nil, "identity.signIn", outcome: "started", reason: "\(provider.name) (\(provider.flow.rawValue))")
        switch provider.flow {
        case .device:
            var machine = SignInMachine.device(DeviceGrant(provider: provider))
            let actions = machine.start()
            flight.machine = machine
            perform(flight, actions)
        case .authorizationCode:
            let loop = host.loop
            let bound = NIOLoopBound(self, eventLoop: loop)
            let flightBound = NIOLoopBound(flight, eventLoop: loop)
            LoopbackListener.open(on: loop) { target in
                let component = bound.value
                let flight = flightBound.value
                guard !flight.finished, var machine = flight.machine else { return }
                let actions = machine.redirectReceived(target: target)
                flight.machine = machine
                component.perform(flight, actions)
            }.assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success(let listener):
                    guard !flight.finished else {
                        listener.close()
                        return
                    }
                    flight.listener = listener
                    var random = SystemRandomNumberGenerator()
                    let bytes = (0..<48).map { _ in UInt8.random(in: 0...255, using: &random) }
                    if oidc != nil {
                        // OpenID Connect Core §3.1.2.1: binds the ID token to this request.
                        flight.nonce = (0..<16).map { _ in
                            String(format: "%02x", UInt8.random(in: 0...255, using: &random))
                        }.joined()
                    }
                    var machine = SignInMachine.code(
                        AuthorizationCodeFlow(
                            provider: provider, port: listener.port, random: bytes, nonce: flight.nonce))
                    let actions = machine.start()
                    flight.machine = machine
                    // The user has this long to finish in the browser.
                    flight.deadline = host.loop.assumeIsolated().scheduleTask(in: .seconds(600)) { [self] in
                        fail(flight, .expired(provider: provider.name, step: .authorization))
                    }
                    perform(flight, actions)
                case .failure(let error):
                    fail(
                        flight,
                        .unreachable(
                            provider: provider.name, step: .authorization,
                            reason: "the loopback listener could not start: \(error)"))
                }
            }
        }
    }

    /// A CPA token for the flight's domain (ETSI TS 103 407): with stored client credentials, the
    /// client credentials request first (a renewal; once the device is paired it answers a user
    /// token, for every domain of the provider); without them, or when user mode gets a client
    /// token (the device is not paired), or the provider no longer knows the client, `CPASignIn`.
    private func renewCPA(
        _ flight: IdentityFlight, _ provider: CPAProviderConfiguration, mode: CPASignIn.Mode, domain: String,
        session: IdentitySession?
    ) {
        readCPAClient(provider.name).assumeIsolated().whenComplete { [self] result in
            guard !flight.finished else { return }
            let credentials: CPAClientCredentials
            switch result {
            case .failure(let error):
                flight.finish(.failure(Self.cordonError(error)))
                return
            case .success(nil):
                startCPASignIn(flight, provider, mode: mode, domain: domain, credentials: nil)
                return
            case .success(let stored?):
                credentials = stored
            }
            let request = provider.clientTokenRequest(credentials, domain: domain)
            post(request, provider: provider.name).assumeIsolated().whenSuccess { [self] answer in
                guard !flight.finished else { return }
                let now = host.clock()
                do throws(IdentityError) {
                    let response = try answer.get()
                    let tokens = try provider.clientToken(
                        status: response.status, body: response.body, credentials: credentials, domain: domain,
                        now: now)
                    if mode == .user, tokens.userName == nil {
                        // A client token: the device is not paired with a user (any more).
                        startCPASignIn(flight, provider, mode: mode, domain: domain, credentials: credentials)
                    } else {
                        store(flight, tokens: tokens, signedInAt: session?.signedInAt, previous: session?.tokens)
                    }
                } catch .providerError(_, _, "invalid_client", _, _) {
                    // The provider forgot the client: `CPASignIn` registers again, once.
                    startCPASignIn(flight, provider, mode: mode, domain: domain, credentials: credentials)
                } catch {
                    audit(nil, "identity.refresh", outcome: "failed", reason: error.description)
                    if let session, now < session.tokens.expiresAt {
                        renewalFailed(provider.name, error)
                        flight.finish(.success(session.tokens))
                    } else {
                        fail(flight, error)
                    }
                }
            }
        }
    }

    private func startCPASignIn(
        _ flight: IdentityFlight, _ provider: CPAProviderConfiguration, mode: CPASignIn.Mode, domain: String,
        credentials: CPAClientCredentials?
    ) {
        flight.signingIn = true
        audit(nil, "identity.signIn", outcome: "started", reason: "\(provider.name) (CPA \(mode.rawValue), \(domain))")
        var machine = SignInMachine.cpa(
            CPASignIn(
                provider: provider, domain: domain, mode: mode, credentials: credentials,
                client: CPAClientDescription(
                    clientName: "Cordon", softwareID: "cordon", softwareVersion: InterfaceDescriptions.version)))
        let actions = machine.start()
        flight.machine = machine
        perform(flight, actions)
    }

    /// Performs what the machine asked, in order.
    func perform(_ flight: IdentityFlight, _ actions: [SignInAction]) {
        for action in actions {
            guard !flight.finished else { return }
            switch action {
            case .send(let request):
                send(flight, request)
            case .sendAfter(let seconds, let request):
                let delay = host.configuration.identityPollDelay ?? Double(seconds)
                flight.scheduled = host.loop.assumeIsolated().scheduleTask(
                    in: .nanoseconds(Int64(delay * 1_000_000_000))
                ) { [self] in send(flight, request) }
            case .showUserCode(let prompt):
                host.logger.notice(
                    "sign-in needed: `cordon login` and a desktop notification show the code to enter",
                    metadata: ["provider": "\(prompt.provider)", "verificationURI": "\(prompt.verificationURI)"])
                flight.show(prompt)
                notifyUserCode(flight, prompt)
            case .openBrowser(let url):
                if let problem = openBrowser(url) {
                    fail(flight, .unreachable(provider: flight.provider.name, step: .authorization, reason: problem))
                }
            case .finish(let tokens):
                store(flight, tokens: tokens, signedInAt: nil, previous: nil)
            case .fail(let error):
                fail(flight, error)
            }
        }
    }

    /// Sends `request` off the loop and feeds the answer back to the flight's machine.
    private func send(_ flight: IdentityFlight, _ request: ProviderRequest) {
        guard !flight.finished else { return }
        post(request, provider: flight.provider.name).assumeIsolated().whenSuccess { [self] answer in
            guard !flight.finished, var machine = flight.machine else { return }
            let now = host.clock()
            let actions: [SignInAction]
            switch answer {
            case .success(let response):
                actions = machine.receive(status: response.status, body: response.body, now: now)
            case .failure(let error): actions = machine.unreachable(error, now: now)
            }
            flight.machine = machine
            if let registered = machine.registeredClient { flight.unsavedClient = registered }
            perform(flight, actions)
        }
    }

    /// POSTs `request` off the loop; the answer or the transport's typed error.
    func post(_ request: ProviderRequest, provider: String)
        -> EventLoopFuture<Result<(status: Int, body: [UInt8]), IdentityError>>
    {
        let transport = self.transport
        return host.loop.makeFutureWithTask { () async -> Result<(status: Int, body: [UInt8]), IdentityError> in
            do throws(IdentityError) {
                return .success(try await transport.post(request, provider: provider))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Ends `flight` with `error`, audited; a renewal's failure sets the provider's backoff (a
    /// sign-in's does not: the user, or an app waiting for one, asked for it).
    func fail(_ flight: IdentityFlight, _ error: IdentityError) {
        guard !flight.finished else { return }
        audit(
            nil, flight.signingIn ? "identity.signIn" : "identity.refresh", outcome: "failed", reason: error.description
        )
        if !flight.signingIn { renewalFailed(flight.provider.name, error) }
        saveRegisteredClient(flight)
        flight.finish(.failure(error.cordonError))
    }

    /// Refreshes `session` (RFC 6749 §6); a refused refresh token signs in again in the same
    /// flight; an unreachable provider leaves a token that has not expired yet in use, and sets
    /// the provider's backoff.
    private func refresh(
        _ flight: IdentityFlight, _ provider: ProviderConfiguration, session: IdentitySession, refreshToken: String
    ) {
        post(provider.refreshRequest(refreshToken), provider: provider.name).assumeIsolated().whenSuccess {
            [self] answer in
            guard !flight.finished else { return }
            let now = host.clock()
            do throws(IdentityError) {
                let response = try answer.get()
                let tokens = try provider.refreshed(
                    session.tokens, status: response.status, body: response.body, now: now)
                store(flight, tokens: tokens, signedInAt: session.signedInAt, previous: session.tokens)
            } catch .refreshRefused(let name) {
                audit(
                    nil, "identity.refresh", outcome: "refused",
                    reason: "\(name): the refresh token was refused; signing in")
                startSignIn(flight)
            } catch {
                audit(nil, "identity.refresh", outcome: "failed", reason: error.description)
                renewalFailed(provider.name, error)
                if now < session.tokens.expiresAt {
                    flight.finish(.success(session.tokens))
                } else {
                    flight.finish(.failure(error.cordonError))
                }
            }
        }
    }

    /// Opens `url` with the configured browser (`xdg-open`); a problem in words, or nil.
    private func openBrowser(_ url: String) -> String? {
        let command = host.configuration.identityBrowser
        guard let program = command.first else { return "no browser is configured" }
        let process = Process()
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(command.dropFirst()) + [url]
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command + [url]
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            return nil
        } catch {
            return "the browser (\(program)) could not be started: \(error)"
        }
    }
}
