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
    /// The flight running for `provider`, or a new one: a refresh of `session` when it has a
    /// refresh token, else a sign-in.
    func flight(_ provider: ProviderConfiguration, refreshing session: IdentitySession?) -> IdentityFlight {
        if let running = flights[provider.name] { return running }
        let flight = IdentityFlight(provider: provider, loop: host.loop)
        flights[provider.name] = flight
        flight.future.assumeIsolated().whenComplete { [self] _ in
            if flights[provider.name] === flight { flights[provider.name] = nil }
        }
        if let session, let refreshToken = session.tokens.refreshToken {
            refresh(flight, session: session, refreshToken: refreshToken)
        } else {
            startSignIn(flight)
        }
        return flight
    }

    /// Starts the provider's flow: the device grant, or the code flow once the listener listens.
    func startSignIn(_ flight: IdentityFlight) {
        flight.signingIn = true
        let provider = flight.provider
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
                    var machine = SignInMachine.code(
                        AuthorizationCodeFlow(provider: provider, port: listener.port, random: bytes))
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
                    "sign-in needed: `cordon login` shows the code to enter",
                    metadata: ["provider": "\(prompt.provider)", "verificationURI": "\(prompt.verificationURI)"])
                flight.show(prompt)
            case .openBrowser(let url):
                if let problem = openBrowser(url) {
                    fail(flight, .unreachable(provider: flight.provider.name, step: .authorization, reason: problem))
                }
            case .finish(let tokens):
                store(flight, tokens: tokens, signedInAt: nil)
            case .fail(let error):
                fail(flight, error)
            }
        }
    }

    /// Sends `request` off the loop and feeds the answer back to the flight's machine.
    private func send(_ flight: IdentityFlight, _ request: ProviderRequest) {
        guard !flight.finished else { return }
        let (transport, name) = (self.transport, flight.provider.name)
        host.loop.makeFutureWithTask { () async -> Result<(status: Int, body: [UInt8]), IdentityError> in
            do throws(IdentityError) {
                return .success(try await transport.post(request, provider: name))
            } catch {
                return .failure(error)
            }
        }.assumeIsolated().whenSuccess { [self] answer in
            guard !flight.finished, var machine = flight.machine else { return }
            let now = host.clock()
            let actions: [SignInAction]
            switch answer {
            case .success(let response):
                actions = machine.receive(status: response.status, body: response.body, now: now)
            case .failure(let error): actions = machine.unreachable(error, now: now)
            }
            flight.machine = machine
            perform(flight, actions)
        }
    }

    /// Ends `flight` with `error`, audited.
    func fail(_ flight: IdentityFlight, _ error: IdentityError) {
        guard !flight.finished else { return }
        audit(
            nil, flight.signingIn ? "identity.signIn" : "identity.refresh", outcome: "failed", reason: error.description
        )
        flight.finish(.failure(error.cordonError))
    }

    /// Refreshes `session` (RFC 6749 §6); a refused refresh token signs in again in the same
    /// flight; an unreachable provider leaves a token that has not expired yet in use.
    private func refresh(_ flight: IdentityFlight, session: IdentitySession, refreshToken: String) {
        let provider = flight.provider
        let request = provider.refreshRequest(refreshToken)
        let transport = self.transport
        host.loop.makeFutureWithTask { () async -> Result<(status: Int, body: [UInt8]), IdentityError> in
            do throws(IdentityError) {
                return .success(try await transport.post(request, provider: provider.name))
            } catch {
                return .failure(error)
            }
        }.assumeIsolated().whenSuccess { [self] answer in
            guard !flight.finished else { return }
            let now = host.clock()
            do throws(IdentityError) {
                let response = try answer.get()
                let tokens = try provider.refreshed(
                    session.tokens, status: response.status, body: response.body, now: now)
                store(flight, tokens: tokens, signedInAt: session.signedInAt)
            } catch .refreshRefused(let name) {
                audit(
                    nil, "identity.refresh", outcome: "refused",
                    reason: "\(name): the refresh token was refused; signing in")
                startSignIn(flight)
            } catch {
                audit(nil, "identity.refresh", outcome: "failed", reason: error.description)
                if now < session.tokens.expiresAt {
                    flight.finish(.success(session.tokens))
                } else {
                    flight.finish(.failure(error.cordonError))
                }
            }
        }
    }

    /// Seals `tokens` for every domain of the flight's provider (replacing the rows: a refresh's
    /// rotated refresh token replaces the old), then answers every waiter.
    private func store(_ flight: IdentityFlight, tokens: TokenSet, signedInAt: Double?) {
        let provider = flight.provider.name
        guard let key = host.purposeKey(["identity", String(generation)]) else {
            flight.finish(.failure(.identityLocked(state: host.lifecycleState.rawValue)))
            return
        }
        let sealer = RecordSealer(key: key)
        key.zero()
        let (database, generation, now) = (host.database, generation, host.clock())
        let domains = domains(of: provider)
        let refreshed = signedInAt != nil
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws in
            var plain = Array(try JSONEncoder().encode(tokens))
            defer { for index in plain.indices { plain[index] = 0 } }
            for domain in domains {
                let sealed = try sealer.seal(
                    plain, slot: StoredIdentitySession.slot(provider: provider, domain: domain))
                try database.storeIdentitySession(
                    StoredIdentitySession(
                        provider: provider, domain: domain, user: nil, expiresAt: tokens.expiresAt,
                        signedInAt: signedInAt ?? now, confirmedAt: now, generation: generation, sealed: sealed))
            }
        }
        work.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success:
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

    /// The stored session of `provider` for `domain`, opened; nil when there is none or it does
    /// not open (sealed under an older generation, changed on disk).
    func readSession(provider: String, domain: String) -> EventLoopFuture<IdentitySession?> {
        guard let key = host.purposeKey(["identity", String(generation)]) else {
            return host.loop.makeFailedFuture(CordonError.identityLocked(state: host.lifecycleState.rawValue))
        }
        let sealer = RecordSealer(key: key)
        key.zero()
        let (database, logger) = (host.database, host.logger)
        return host.storePool.runIfActive(eventLoop: host.loop) { () throws -> IdentitySession? in
            guard let stored = try database.identitySession(provider: provider, domain: domain) else { return nil }
            do {
                let opened = try sealer.open(
                    stored.sealed, slot: StoredIdentitySession.slot(provider: provider, domain: domain))
                defer { opened.zero() }
                let tokens = try opened.withUnsafeBytes { try JSONDecoder().decode(TokenSet.self, from: Data($0)) }
                return IdentitySession(
                    provider: provider, domain: domain, tokens: tokens, signedInAt: stored.signedInAt,
                    confirmedAt: stored.confirmedAt)
            } catch {
                logger.warning(
                    "a stored identity session does not open; signing in again",
                    metadata: ["provider": "\(provider)", "domain": "\(domain)"])
                return nil
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
