import CordonLocking
import CordonProtocol

/// Whether an app's pinned channel may carry bytes, following the app's key, the container's lock
/// and the app's network policy (docs/ARCHITECTURE.md, "Pinned channel"): no new connection while
/// the key is unavailable, every open one cut the moment it is revoked; while the container is
/// locked with the key held, what `network.onLock` says (`keep`, `refuseNew`, the default, or
/// `cut`); and when the policy changes, every open connection whose server the new policy would
/// refuse is cut at once, with the reason.
///
/// `CordonApp` keeps one for `secureChannel()` and feeds it every event (and, on
/// `PolicyDidChange`, the new policy) before the app sees it; `cordon run --tunnel` keeps one its
/// supervisor feeds. Until the first event says whether the key is available, `admit` waits for
/// that event (or for its caller's cancellation).
public final class ChannelGate: Sendable {
    /// The cut of one open connection: fails its request or closes its relay with the reason.
    public typealias Cut = @Sendable (SecureChannelError) -> Void
    /// Checks one open connection against a new policy: nil when the policy still admits its
    /// server, the refusal otherwise.
    public typealias Recheck = @Sendable (NetworkPolicy) async -> SecureChannelError?
    /// One open connection's check against a new policy: its host and its `Recheck`.
    public typealias Policed = (host: String, recheck: Recheck)

    private enum Availability {
        case unknown, available
        case unavailable(String)
    }

    private struct Connection {
        var cut: Cut
        var policed: Policed?
    }

    private struct State {
        var availability = Availability.unknown
        /// The container is locked (every state but `unlocked`), from the last event.
        var locked = false
        /// `network.onLock` of the policy last applied (`refuseNew` until one is).
        var onLock = "refuseNew"
        /// The policy last applied, and how many have been.
        var policy: NetworkPolicy?
        var generation = 0
        var open: [Int: Connection] = [:]
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Who waits for a number of open connections (`opened(atLeast:)`).
        var openWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextId = 0
        /// The device's posture revoked the app's key (reason `posture`): the container's key
        /// coming back does not reopen the gate; only the agent giving it back with reason
        /// `posture` does (or a new agent, which says the posture anew).
        var postureBlocked = false

        /// Why a new connection of `appId` is refused now, nil when it is admitted.
        func refusal(_ appId: String) -> SecureChannelError? {
            switch availability {
            case .unknown:
                return .keyUnavailable(appId: appId, reason: "the agent has not said whether it is available")
            case .unavailable(let reason): return .keyUnavailable(appId: appId, reason: reason)
            case .available:
                guard locked, onLock != "keep" else { return nil }
                return .locked(appId: appId, onLock: onLock)
            }
        }

        /// Takes every open connection (to cut them).
        mutating func takeOpen() -> [Cut] {
            defer { open = [:] }
            return open.values.map(\.cut)
        }
    }

    /// The app whose key the gate follows (named in its errors).
    public let appId: String
    private let state = Locked(State())

    /// A gate for `appId`; `available` sets the key's state when it is already known.
    public init(appId: String, available: Bool? = nil) {
        self.appId = appId
        if let available {
            state.withLock { $0.availability = available ? .available : .unavailable("unavailable") }
        }
    }

    /// Whether a new connection would be admitted now.
    public var isOpen: Bool { state.withLock { $0.refusal(appId) == nil } }

    /// Why a new connection would be refused now (`keyUnavailable`, `locked`), or nil when it
    /// would be admitted.
    public var refusal: SecureChannelError? { state.withLock { $0.refusal(appId) } }

    /// The number of connections open through the gate.
    public var openConnections: Int { state.withLock { $0.open.count } }

    /// The policy last applied (`apply(_:)`), nil before the first.
    public var policy: NetworkPolicy? { state.withLock { $0.policy } }

    /// How many policies have been applied: a channel built for an older one builds anew.
    public var policyGeneration: Int { state.withLock { $0.generation } }

    /// Applies one of the app's events: the key's state, `EncryptionKeyAvailable`,
    /// `EncryptionKeyUnavailable` (any reason, the SDK's `agentUnavailable` included) and `Wiped`,
    /// and the container's lock state every event carries. A posture revocation holds until the
    /// agent lifts it (`EncryptionKeyAvailable` with reason `posture`), whatever the container does
    /// meanwhile.
    public func follow(_ event: CordonEvent) {
        if event.reason != .agentUnavailable { setLocked(event.state.isLocked) }
        switch event.payload {
        case .state:
            if event.keyAvailable { keyBecameAvailable() } else { keyBecameUnavailable(reason: event.state.rawValue) }
        case .encryptionKeyAvailable:
            if event.reason == .posture { state.withLock { $0.postureBlocked = false } }
            keyBecameAvailable()
        case .encryptionKeyUnavailable:
            state.withLock { state in
                if event.reason == .posture { state.postureBlocked = true }
                if event.reason == .agentUnavailable { state.postureBlocked = false }
            }
            keyBecameUnavailable(reason: event.reason.rawValue)
        case .wiped(let wipedApp) where wipedApp == nil || wipedApp == appId: keyBecameUnavailable(reason: "wiped")
        default: break
        }
    }

    /// The container was locked (or unlocked): under `network.onLock: cut` a lock cuts every open
    /// connection; under `refuseNew` and `cut` no new one is admitted while locked.
    public func setLocked(_ locked: Bool) {
        let cuts = state.withLock { state -> [Cut] in
            state.locked = locked
            return locked && state.onLock == "cut" ? state.takeOpen() : []
        }
        for cut in cuts { cut(.cutOnLock(appId: appId)) }
    }

    /// Applies the app's (new) network policy: its `onLock` from now on, and every open
    /// connection whose server the policy no longer admits (its `Recheck`) is cut at once with the
    /// reason; returns the reasons of the connections cut.
    @discardableResult
    public func apply(_ policy: NetworkPolicy) async -> [SecureChannelError] {
        let (open, lockCuts) = state.withLock { state -> ([Int: Connection], [Cut]) in
            state.policy = policy
            state.generation += 1
            state.onLock = policy.onLock ?? "refuseNew"
            let lockCuts = state.locked && state.onLock == "cut" ? state.takeOpen() : []
            return (state.open, lockCuts)
        }
        for cut in lockCuts { cut(.cutOnLock(appId: appId)) }
        var reasons: [SecureChannelError] = []
        for (id, connection) in open {
            guard let policed = connection.policed, let refusal = await policed.recheck(policy) else { continue }
            // Only if it is still open (it may have ended or been cut meanwhile).
            guard let cut = state.withLock({ $0.open.removeValue(forKey: id) })?.cut else { continue }
            let error = SecureChannelError.policyChanged(host: policed.host, reason: "\(refusal)")
            reasons.append(error)
            cut(error)
        }
        return reasons
    }

    /// The key is available: new connections are admitted (unless the posture blocks the app, or
    /// the container is locked and `network.onLock` refuses).
    public func keyBecameAvailable() {
        let waiters = state.withLock { state in
            state.availability = state.postureBlocked ? .unavailable("posture") : .available
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The key is unavailable: every open connection is cut with `reason`, new ones refused.
    public func keyBecameUnavailable(reason: String) {
        let (cuts, waiters) = state.withLock { state in
            state.availability = .unavailable(reason)
            defer { state.waiters = [:] }
            return (state.takeOpen(), Array(state.waiters.values))
        }
        for waiter in waiters { waiter.resume() }
        let error = SecureChannelError.revoked(appId: appId, reason: reason)
        for cut in cuts { cut(error) }
    }

    /// Registers an open connection and its cut; with `policed`, a policy change cuts it when the
    /// new policy refuses its server (`policyChanged`). Throws `keyUnavailable` (and registers nothing) when no new
    /// connection is admitted now. Returns the id for `close(_:)`.
    public func open(policed: Policed? = nil, cut: @escaping Cut) throws(SecureChannelError) -> Int {
        let (id, ready) = try state.withLock {
            (state: inout State) throws(SecureChannelError) -> (Int, [CheckedContinuation<Void, Never>]) in
            if let refusal = state.refusal(appId) { throw refusal }
            state.nextId += 1
            state.open[state.nextId] = Connection(cut: cut, policed: policed)
            let count = state.open.count
            let ready = state.openWaiters.filter { $0.count <= count }.map(\.continuation)
            state.openWaiters.removeAll { $0.count <= count }
            return (state.nextId, ready)
        }
        for waiter in ready { waiter.resume() }
        return id
    }

    /// Returns once at least `count` connections are open at the same time (for tests and
    /// benchmarks that must act while one is).
    func opened(atLeast count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.open.count < count else { return true }
                state.openWaiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Forgets a connection that ended.
    public func close(_ id: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    /// Waits until an event says whether the key is available (no timer: the event itself, or the
    /// caller's cancellation, ends the wait), then throws `keyUnavailable` unless a new connection
    /// is admitted.
    public func admit() async throws(SecureChannelError) {
        let id: Int? = state.withLock { state in
            guard case .unknown = state.availability else { return nil }
            state.nextId += 1
            return state.nextId
        }
        if let id {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool in
                        guard case .unknown = state.availability, !Task.isCancelled else { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                resumeWaiter(id)
            }
        }
        try state.withLock { (state: inout State) throws(SecureChannelError) in
            if case .unknown = state.availability {
                throw .keyUnavailable(
                    appId: appId, reason: "the request was cancelled before the agent said whether the key is available"
                )
            }
            if let refusal = state.refusal(appId) { throw refusal }
        }
    }

    private func resumeWaiter(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
