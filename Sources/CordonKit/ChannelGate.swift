import CordonProtocol
import Synchronization

/// Whether an app's pinned channel may carry bytes, following the app's key
/// (docs/ARCHITECTURE.md, "Pinned channel"): no new connection while the key is unavailable, and
/// every open one cut the moment it is revoked.
///
/// `CordonApp` keeps one for `secureChannel()` and feeds it every event before the app sees it;
/// `cordon run --tunnel` keeps one its supervisor feeds. Until the first event says whether the
/// key is available, `admit` waits for it (up to its limit).
public final class ChannelGate: Sendable {
    /// The cut of one open connection: fails its request or closes its relay with the reason.
    public typealias Cut = @Sendable (SecureChannelError) -> Void

    private enum Availability {
        case unknown, available
        case unavailable(String)
    }

    private struct State {
        var availability = Availability.unknown
        var open: [Int: Cut] = [:]
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Who waits for a number of open connections (`opened(atLeast:)`).
        var openWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextId = 0
        /// The device's posture revoked the app's key (reason `posture`): the container's key
        /// coming back does not reopen the gate; only the agent giving it back with reason
        /// `posture` does (or a new agent, which says the posture anew).
        var postureBlocked = false
    }

    /// The app whose key the gate follows (named in its errors).
    public let appId: String
    private let state = Mutex(State())

    /// A gate for `appId`; `available` sets the key's state when it is already known.
    public init(appId: String, available: Bool? = nil) {
        self.appId = appId
        if let available {
            state.withLock { $0.availability = available ? .available : .unavailable("unavailable") }
        }
    }

    /// Whether a new connection would be admitted now.
    public var isOpen: Bool {
        state.withLock {
            if case .available = $0.availability { return true }
            return false
        }
    }

    /// Why a new connection would be refused now (`keyUnavailable`), or nil when it would be admitted.
    public var refusal: SecureChannelError? {
        state.withLock {
            switch $0.availability {
            case .available: return nil
            case .unavailable(let reason): return .keyUnavailable(appId: appId, reason: reason)
            case .unknown: return .keyUnavailable(appId: appId, reason: "the agent has not said")
            }
        }
    }

    /// The number of connections open through the gate.
    public var openConnections: Int { state.withLock { $0.open.count } }

    /// Applies one of the app's events: the key's state, `EncryptionKeyAvailable`,
    /// `EncryptionKeyUnavailable` (any reason, the SDK's `agentUnavailable` included) and `Wiped`.
    /// A posture revocation holds until the agent lifts it (`EncryptionKeyAvailable` with reason
    /// `posture`), whatever the container does meanwhile.
    public func follow(_ event: CordonEvent) {
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

    /// The key is available: new connections are admitted (unless the posture blocks the app).
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
            defer {
                state.open = [:]
                state.waiters = [:]
            }
            return (Array(state.open.values), Array(state.waiters.values))
        }
        for waiter in waiters { waiter.resume() }
        let error = SecureChannelError.revoked(appId: appId, reason: reason)
        for cut in cuts { cut(error) }
    }

    /// Registers an open connection and its cut; throws `keyUnavailable` (and registers nothing)
    /// when the key is not available now. Returns the id for `close(_:)`.
    public func open(cut: @escaping Cut) throws(SecureChannelError) -> Int {
        let (id, ready) = try state.withLock {
            (state: inout State) throws(SecureChannelError) -> (Int, [CheckedContinuation<Void, Never>]) in
            switch state.availability {
            case .available:
                state.nextId += 1
                state.open[state.nextId] = cut
                let count = state.open.count
                let ready = state.openWaiters.filter { $0.count <= count }.map(\.continuation)
                state.openWaiters.removeAll { $0.count <= count }
                return (state.nextId, ready)
            case .unavailable(let reason): throw .keyUnavailable(appId: appId, reason: reason)
            case .unknown: throw .keyUnavailable(appId: appId, reason: "the agent has not said")
            }
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

    /// Waits until the key's state is known (at most `limit`), then throws `keyUnavailable`
    /// unless it is available.
    public func admit(waitingUpTo limit: Duration = .seconds(5)) async throws(SecureChannelError) {
        let id: Int? = state.withLock { state in
            guard case .unknown = state.availability else { return nil }
            state.nextId += 1
            return state.nextId
        }
        if let id {
            let timer = Task { [weak self] in
                try? await Task.sleep(for: limit)
                self?.resumeWaiter(id)
            }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .unknown = state.availability else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            timer.cancel()
        }
        try state.withLock { (state: inout State) throws(SecureChannelError) in
            switch state.availability {
            case .available: return
            case .unavailable(let reason): throw .keyUnavailable(appId: appId, reason: reason)
            case .unknown: throw .keyUnavailable(appId: appId, reason: "the agent has not said whether it is available")
            }
        }
    }

    private func resumeWaiter(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
