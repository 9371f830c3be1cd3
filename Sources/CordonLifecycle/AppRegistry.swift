import CordonProtocol

/// The registered apps and their compliance with revocations. A value type, clock injected.
public struct AppRegistry: Sendable {
    public private(set) var registrations: [ConnectionID: AppRegistration] = [:]
    private var byToken: [String: ConnectionID] = [:]
    private var bySubscriber: [ConnectionID: ConnectionID] = [:]

    public init() {}

    /// Registers `registration` for its connection.
    public mutating func register(_ registration: AppRegistration) throws(CordonError) {
        if let existing = registrations[registration.connection] {
            throw .alreadyRegistered(appId: existing.appId)
        }
        if let problem = AppIdentifier.problem(with: registration.appId) {
            throw .invalidAppId(appId: registration.appId, reason: problem)
        }
        registrations[registration.connection] = registration
        byToken[registration.token] = registration.connection
    }

    /// Removes whatever `connection` held: its registration, or its subscription.
    public mutating func connectionClosed(_ connection: ConnectionID) {
        if let registration = registrations.removeValue(forKey: connection) {
            byToken.removeValue(forKey: registration.token)
            if let subscriber = registration.subscriber { bySubscriber.removeValue(forKey: subscriber) }
        }
        if let owner = bySubscriber.removeValue(forKey: connection) {
            registrations[owner]?.subscriber = nil
        }
    }

    /// Binds the subscription on `subscriber` to the registration holding `token`.
    /// The subscriber must be the same process that registered.
    public mutating func bindSubscriber(token: String, subscriber: ConnectionID, pid: Int) throws(CordonError) {
        guard let owner = byToken[token], var registration = registrations[owner], registration.ownerPid == pid else {
            throw .invalidToken
        }
        if let previous = registration.subscriber { bySubscriber.removeValue(forKey: previous) }
        registration.subscriber = subscriber
        registrations[owner] = registration
        bySubscriber[subscriber] = owner
    }

    /// The connection of the registration that `token` names, when `pid` is the process that holds it.
    public func connection(token: String, pid: Int) -> ConnectionID? {
        guard let owner = byToken[token], registrations[owner]?.ownerPid == pid else { return nil }
        return owner
    }

    /// The registration whose events go to `subscriber`, if any.
    public func registration(subscribedOn subscriber: ConnectionID) -> AppRegistration? {
        bySubscriber[subscriber].flatMap { registrations[$0] }
    }

    /// Records that `event` went out: revocations start a pending acknowledgement for managed apps,
    /// due at `deadline(app)` when given (per-app policy overrides), else at the event's deadline.
    /// Returns the apps frozen for a missed deadline that the key's return thaws.
    /// Apps in `stillRevoked` (their own key revoked, by the device's posture) keep their
    /// obligation and stay frozen when the container's key comes back.
    @discardableResult
    public mutating func eventEmitted(
        _ event: CordonEvent, deadline: ((AppRegistration) -> Double?)? = nil, stillRevoked: Set<String> = []
    ) -> [AppRegistration] {
        var thawed: [AppRegistration] = []
        switch event.kind {
        case .encryptionKeyUnavailable:
            for (key, registration) in registrations where registration.managed {
                registrations[key]?.pendingSeq = event.seq
                registrations[key]?.deadline = deadline?(registration) ?? event.ackDeadline ?? event.time
            }
        case .encryptionKeyAvailable, .wiped:
            for (key, registration) in registrations {
                if event.kind == .encryptionKeyAvailable && stillRevoked.contains(registration.appId) { continue }
                if keyReturned(key, registration, thawing: event.kind == .encryptionKeyAvailable) {
                    thawed.append(registration)
                }
            }
        default:
            break
        }
        return thawed.sorted { $0.connection < $1.connection }
    }

    /// One app's key was revoked on its own (the device's posture, docs/ARCHITECTURE.md
    /// "Posture"): its managed registrations owe an acknowledgement of `seq` by `deadline`, as
    /// for a revocation of the container's key.
    public mutating func appKeyRevoked(_ appId: String, seq: Int, deadline: Double) {
        for (key, registration) in registrations where registration.managed && registration.appId == appId {
            registrations[key]?.pendingSeq = seq
            registrations[key]?.deadline = deadline
            registrations[key]?.overdue = false
        }
    }

    /// One app's key is back: its obligation lapses; returns its registrations frozen for a
    /// missed deadline, which thaw.
    public mutating func appKeyReturned(_ appId: String) -> [AppRegistration] {
        var thawed: [AppRegistration] = []
        for (key, registration) in registrations where registration.appId == appId {
            if keyReturned(key, registration, thawing: true) { thawed.append(registration) }
        }
        return thawed.sorted { $0.connection < $1.connection }
    }

    /// The obligation lapses once the key is back (or gone for good); a frozen app thaws when the
    /// key is back (after a wipe it stays frozen: its data is gone). Whether it thaws.
    private mutating func keyReturned(_ key: ConnectionID, _ registration: AppRegistration, thawing: Bool) -> Bool {
        var thaws = false
        if registration.enforcement == .freeze && thawing {
            thaws = true
            registrations[key]?.enforcement = nil
        }
        if registration.enforcement != .freeze && registration.enforcement != .terminate {
            registrations[key]?.enforcement = nil
        }
        registrations[key]?.pendingSeq = nil
        registrations[key]?.deadline = nil
        registrations[key]?.overdue = false
        return thaws
    }

    /// Records what the agent did to the app on `connection` for a missed deadline.
    public mutating func enforced(_ connection: ConnectionID, _ action: EnforcementAction) {
        registrations[connection]?.enforcement = action
    }

    /// Records an acknowledgement from the app registered on `connection`.
    public mutating func acknowledge(connection: ConnectionID, seq: Int, latestSeq: Int) throws(CordonError) {
        guard var registration = registrations[connection] else { throw .notRegistered }
        guard seq > 0, seq <= latestSeq else { throw .unknownSequence(seq: seq) }
        registration.lastAckSeq = max(registration.lastAckSeq ?? 0, seq)
        if let pending = registration.pendingSeq, seq >= pending {
            registration.pendingSeq = nil
            registration.deadline = nil
            registration.overdue = false
        }
        registrations[connection] = registration
    }

    /// Marks apps whose deadline passed as overdue and returns them (newly overdue only).
    public mutating func tick(now: Double) -> [AppRegistration] {
        var overdue: [AppRegistration] = []
        for (key, registration) in registrations {
            guard let deadline = registration.deadline, !registration.overdue, now >= deadline else { continue }
            registrations[key]?.overdue = true
            if let updated = registrations[key] { overdue.append(updated) }
        }
        return overdue.sorted { $0.connection < $1.connection }
    }

    /// The earliest pending acknowledgement deadline.
    public var nextDeadline: Double? {
        registrations.values.filter { !$0.overdue }.compactMap(\.deadline).min()
    }

    /// All registrations in registration order.
    public var all: [AppRegistration] {
        registrations.values.sorted { $0.connection < $1.connection }
    }
}
