import CordonIdentity
import CordonProtocol
import NIOCore

/// A sign-in state machine of any flow, driven by `IdentityComponent`.
enum SignInMachine {
    case device(DeviceGrant)
    case code(AuthorizationCodeFlow)
    case cpa(CPASignIn)

    mutating func start() -> [SignInAction] {
        switch self {
        case .device(var grant):
            defer { self = .device(grant) }
            return grant.start()
        case .code(var flow):
            defer { self = .code(flow) }
            return flow.start()
        case .cpa(var signIn):
            defer { self = .cpa(signIn) }
            return signIn.start()
        }
    }

    mutating func receive(status: Int, body: [UInt8], now: Double) -> [SignInAction] {
        switch self {
        case .device(var grant):
            defer { self = .device(grant) }
            return grant.receive(status: status, body: body, now: now)
        case .code(var flow):
            defer { self = .code(flow) }
            return flow.receive(status: status, body: body, now: now)
        case .cpa(var signIn):
            defer { self = .cpa(signIn) }
            return signIn.receive(status: status, body: body, now: now)
        }
    }

    /// A request that did not reach the provider: the device grant and CPA's `/token` polling try
    /// again until their deadline; the code exchange fails.
    mutating func unreachable(_ error: IdentityError, now: Double) -> [SignInAction] {
        switch self {
        case .device(var grant):
            defer { self = .device(grant) }
            guard case .unreachable(_, _, let reason) = error else { return [.fail(error)] }
            return grant.unreachable(reason: reason, now: now)
        case .cpa(var signIn):
            defer { self = .cpa(signIn) }
            guard case .unreachable(_, _, let reason) = error else { return [.fail(error)] }
            return signIn.unreachable(reason: reason, now: now)
        case .code:
            return [.fail(error)]
        }
    }

    /// The CPA client credentials a registration of this sign-in gave, to be stored.
    var registeredClient: CPAClientCredentials? {
        guard case .cpa(let signIn) = self, signIn.registeredNewClient else { return nil }
        return signIn.credentials
    }

    mutating func redirectReceived(target: String) -> [SignInAction] {
        guard case .code(var flow) = self else { return [] }
        defer { self = .code(flow) }
        return flow.redirectReceived(target: target)
    }
}

/// One provider's sign-in or refresh in progress, which every `GetToken`, `SignIn` and `SignOut`
/// for the provider joins: a single flight (docs/ARCHITECTURE.md, "Identity"). Confined to the
/// agent's event loop.
final class IdentityFlight {
    /// The provider; `.discovering` until its issuer's discovery document gave its endpoints.
    var provider: ConfiguredProvider
    /// Whether it waits for the issuer's discovery document.
    var discovering = false
    /// The domain a CPA flight gets the token of (an OAuth flight's tokens serve every domain of
    /// its provider).
    let domain: String?
    /// The OpenID Connect `nonce` the code flow sent, checked in the ID token.
    var nonce: String?
    /// CPA client credentials a registration gave, not stored yet.
    var unsavedClient: CPAClientCredentials?
    /// Whether it signs in (not only refreshes).
    var signingIn = false
    var machine: SignInMachine?
    /// The device prompt, once the provider gave it.
    var prompt: DeviceCodePrompt?
    /// Callers streaming the prompt (`SignIn` with `more`).
    var promptWatchers: [(DeviceCodePrompt) -> Void] = []
    var listener: LoopbackListener?
    var scheduled: Scheduled<Void>?
    var deadline: Scheduled<Void>?
    private(set) var finished = false
    private let result: EventLoopPromise<TokenSet>

    init(provider: ConfiguredProvider, domain: String?, loop: any EventLoop) {
        self.provider = provider
        self.domain = domain
        result = loop.makePromise()
    }

    /// The tokens, or the `CordonError` the flight ended with.
    var future: EventLoopFuture<TokenSet> { result.futureResult }

    /// Shows the prompt to every watcher, now and later.
    func show(_ prompt: DeviceCodePrompt) {
        self.prompt = prompt
        for watcher in promptWatchers { watcher(prompt) }
    }

    /// Ends the flight once: the listener closed, the timers cancelled, every waiter answered.
    func finish(_ outcome: Result<TokenSet, CordonError>) {
        guard !finished else { return }
        finished = true
        listener?.close()
        listener = nil
        scheduled?.cancel()
        deadline?.cancel()
        promptWatchers = []
        machine = nil
        switch outcome {
        case .success(let tokens): result.succeed(tokens)
        case .failure(let error): result.fail(error)
        }
    }
}

extension IdentityError {
    /// The typed error callers get: cancelled, expired, or failed naming the provider and step.
    var cordonError: CordonError {
        switch self {
        case .cancelled(let provider, let step): .signInCancelled(provider: provider, step: step.rawValue)
        case .expired(let provider, let step): .signInExpired(provider: provider, step: step.rawValue)
        default: .signInFailed(provider: provider, step: step.rawValue, reason: cause)
        }
    }
}
