import Foundation

/// A lifecycle event, as the agent emits it, sends it to subscribers and an app or tool
/// receives it (one type for all of them): a header every event has, and the ``Payload`` of its
/// kind. Times are Unix seconds, as on the wire; ``date`` and ``ackDeadlineDate`` give them as
/// `Date`s.
///
/// On the wire an event is one flat object: the header's members, `kind`, and the members of its
/// payload (`ackDeadline`, `policyVersion`, `appId`, `pid`, `enforcement`, `document`, `posture`,
/// `provider`), each only when its kind carries it. Decoding refuses a member the kind does not
/// carry and a missing one it must, naming it.
public struct CordonEvent: Sendable, Codable, Equatable {
    /// Position in the agent's event order; every subscriber sees the same order.
    public var seq: Int
    /// What happened, with exactly the data of its kind.
    public var payload: Payload
    public var reason: EventReason
    /// Seconds since the Unix epoch.
    public var time: Double
    /// The state after the event.
    public var state: LifecycleState

    public init(seq: Int, payload: Payload, reason: EventReason, time: Double, state: LifecycleState) {
        self.seq = seq
        self.payload = payload
        self.reason = reason
        self.time = time
        self.state = state
    }

    /// The event's kind, as its payload says.
    public var kind: EventKind { payload.kind }

    /// Whether the key is in the agent's memory after this event.
    public var keyAvailable: Bool { state.keyAvailable }

    /// When it happened.
    public var date: Date { Date(timeIntervalSince1970: time) }

    /// For `EncryptionKeyUnavailable`: when the app's acknowledgement is due (Unix seconds).
    public var ackDeadline: Double? {
        guard case .encryptionKeyUnavailable(let deadline, _) = payload else { return nil }
        return deadline
    }

    /// For `EncryptionKeyUnavailable`: when the acknowledgement is due.
    public var ackDeadlineDate: Date? { ackDeadline.map { Date(timeIntervalSince1970: $0) } }
}

extension CordonEvent {
    /// What an event carries besides the header: one case per ``EventKind``, with exactly that
    /// kind's data.
    public enum Payload: Sendable, Equatable {
        /// A snapshot of the current state: the first reply of every subscription.
        case state
        /// The key is available. With `posture` (reason `posture`, sent to that app only): the
        /// posture block on the app is lifted (its `results` are empty).
        case encryptionKeyAvailable(posture: PostureNotice? = nil)
        /// The key is revoked: the app acknowledges by `ackDeadline` (none from the SDK's
        /// `agentUnavailable` and from a posture revocation). With `posture` (reason `posture`, sent to
        /// that app only): the failing checks that revoke this app's key.
        case encryptionKeyUnavailable(ackDeadline: Double?, posture: PostureNotice? = nil)
        case didLock
        case didUnlock
        /// The container was wiped, or with `appId` (sent to that app only) one app's data.
        case wiped(appId: String? = nil)
        /// The policy changed: the version hash of the policy now in force.
        case policyDidChange(policyVersion: String)
        /// The agent acted on an app that did not acknowledge in time (or thawed it).
        case appEnforced(appId: String, pid: Int, enforcement: EnforcementAction)
        /// Another app handed this app a document (sent to the target app only).
        case openDocument(DocumentInfo)
        /// Posture checks the policy sets to `warn` fail for this app (sent to that app only).
        case postureWarning(PostureNotice)
        /// The user signed out of an identity provider.
        case didSignOut(provider: String)

        /// The kind of event this payload belongs to.
        public var kind: EventKind {
            switch self {
            case .state: .state
            case .encryptionKeyAvailable: .encryptionKeyAvailable
            case .encryptionKeyUnavailable: .encryptionKeyUnavailable
            case .didLock: .didLock
            case .didUnlock: .didUnlock
            case .wiped: .wiped
            case .policyDidChange: .policyDidChange
            case .appEnforced: .appEnforced
            case .openDocument: .openDocument
            case .postureWarning: .postureWarning
            case .didSignOut: .didSignOut
            }
        }
    }

    /// The posture findings an event sends to one app: the app, and the failing checks with their
    /// evidence (`appId` and `posture` on the wire).
    public struct PostureNotice: Sendable, Equatable {
        public var appId: String
        public var results: [PostureResult]

        public init(appId: String, results: [PostureResult]) {
            self.appId = appId
            self.results = results
        }
    }
}

// MARK: - The wire form

extension CordonEvent {
    private enum CodingKeys: String, CodingKey {
        case seq, kind, reason, time, state
        case ackDeadline, policyVersion, appId, pid, enforcement, document, posture, provider
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(kind, forKey: .kind)
        try container.encode(reason, forKey: .reason)
        try container.encode(time, forKey: .time)
        try container.encode(state, forKey: .state)
        let members = payload.members
        try container.encodeIfPresent(members.ackDeadline, forKey: .ackDeadline)
        try container.encodeIfPresent(members.policyVersion, forKey: .policyVersion)
        try container.encodeIfPresent(members.appId, forKey: .appId)
        try container.encodeIfPresent(members.pid, forKey: .pid)
        try container.encodeIfPresent(members.enforcement, forKey: .enforcement)
        try container.encodeIfPresent(members.document, forKey: .document)
        try container.encodeIfPresent(members.posture, forKey: .posture)
        try container.encodeIfPresent(members.provider, forKey: .provider)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(Int.self, forKey: .seq)
        let kind = try container.decode(EventKind.self, forKey: .kind)
        reason = try container.decode(EventReason.self, forKey: .reason)
        time = try container.decode(Double.self, forKey: .time)
        state = try container.decode(LifecycleState.self, forKey: .state)
        let members = PayloadReader(container: container, kind: kind)
        switch kind {
        case .state:
            try members.carryNothing()
            payload = .state
        case .encryptionKeyAvailable:
            try members.refuse(.ackDeadline, .policyVersion, .pid, .enforcement, .document, .provider)
            payload = .encryptionKeyAvailable(posture: try members.optionalPosture())
        case .encryptionKeyUnavailable:
            try members.refuse(.policyVersion, .pid, .enforcement, .document, .provider)
            payload = .encryptionKeyUnavailable(
                ackDeadline: try members.optional(Double.self, .ackDeadline), posture: try members.optionalPosture())
        case .didLock:
            try members.carryNothing()
            payload = .didLock
        case .didUnlock:
            try members.carryNothing()
            payload = .didUnlock
        case .wiped:
            try members.refuse(.ackDeadline, .policyVersion, .pid, .enforcement, .document, .posture, .provider)
            payload = .wiped(appId: try members.optional(String.self, .appId))
        case .policyDidChange:
            try members.refuse(.ackDeadline, .appId, .pid, .enforcement, .document, .posture, .provider)
            payload = .policyDidChange(policyVersion: try members.required(String.self, .policyVersion))
        case .appEnforced:
            try members.refuse(.ackDeadline, .policyVersion, .document, .posture, .provider)
            payload = .appEnforced(
                appId: try members.required(String.self, .appId), pid: try members.required(Int.self, .pid),
                enforcement: try members.required(EnforcementAction.self, .enforcement))
        case .openDocument:
            try members.refuse(.ackDeadline, .policyVersion, .appId, .pid, .enforcement, .posture, .provider)
            payload = .openDocument(try members.required(DocumentInfo.self, .document))
        case .postureWarning:
            try members.refuse(.ackDeadline, .policyVersion, .pid, .enforcement, .document, .provider)
            payload = .postureWarning(
                PostureNotice(
                    appId: try members.required(String.self, .appId),
                    results: try members.required([PostureResult].self, .posture)))
        case .didSignOut:
            try members.refuse(.ackDeadline, .policyVersion, .appId, .pid, .enforcement, .document, .posture)
            payload = .didSignOut(provider: try members.required(String.self, .provider))
        }
    }

    /// Reads the payload's members of one event, refusing those its kind does not carry.
    private struct PayloadReader {
        let container: KeyedDecodingContainer<CodingKeys>
        let kind: EventKind

        func carryNothing() throws {
            try refuse(.ackDeadline, .policyVersion, .appId, .pid, .enforcement, .document, .posture, .provider)
        }

        /// Throws when one of `keys` is present (a `null` counts as absent, as for any optional).
        func refuse(_ keys: CodingKeys...) throws {
            for key in keys where container.contains(key) {
                guard try !container.decodeNil(forKey: key) else { continue }
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "\(kind.rawValue) carries no \(key.stringValue), and this event has one")
            }
        }

        func optional<T: Decodable>(_ type: T.Type, _ key: CodingKeys) throws -> T? {
            try container.decodeIfPresent(type, forKey: key)
        }

        func required<T: Decodable>(_ type: T.Type, _ key: CodingKeys) throws -> T {
            guard let value = try container.decodeIfPresent(type, forKey: key) else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: container.codingPath,
                        debugDescription: "\(kind.rawValue) carries \(key.stringValue), and this event has none"))
            }
            return value
        }

        /// `appId` and `posture`, both or neither.
        func optionalPosture() throws -> PostureNotice? {
            let appId = try optional(String.self, .appId)
            let results = try optional([PostureResult].self, .posture)
            switch (appId, results) {
            case (nil, nil): return nil
            case (let appId?, let results?): return PostureNotice(appId: appId, results: results)
            case (nil, _?): _ = try required(String.self, .appId)
            case (_?, nil): _ = try required([PostureResult].self, .posture)
            }
            return nil
        }
    }
}

extension CordonEvent.Payload {
    /// The payload as the wire's optional members, for a tool that shows events flat (`cordon
    /// events`); each is set when the kind carries it.
    public var members: CordonEvent.PayloadMembers { CordonEvent.PayloadMembers(self) }
}

extension CordonEvent {
    /// A payload as the wire's optional members: what a kind carries is set, the rest is nil.
    public struct PayloadMembers: Sendable, Equatable {
        /// `EncryptionKeyUnavailable`'s deadline.
        public var ackDeadline: Double?
        /// `PolicyDidChange`'s version.
        public var policyVersion: String?
        /// The app of `AppEnforced`, of a `Wiped` of one app, of the posture events.
        public var appId: String?
        /// `AppEnforced`'s process.
        public var pid: Int?
        /// `AppEnforced`'s action.
        public var enforcement: EnforcementAction?
        /// `OpenDocument`'s document.
        public var document: DocumentInfo?
        /// The failing checks of the posture events.
        public var posture: [PostureResult]?
        /// `DidSignOut`'s provider.
        public var provider: String?

        /// The members of `payload`.
        public init(_ payload: Payload) {
            switch payload {
            case .state, .didLock, .didUnlock: break
            case .encryptionKeyAvailable(let notice):
                appId = notice?.appId
                posture = notice?.results
            case .encryptionKeyUnavailable(let deadline, let notice):
                ackDeadline = deadline
                appId = notice?.appId
                posture = notice?.results
            case .wiped(let app): appId = app
            case .policyDidChange(let version): policyVersion = version
            case .appEnforced(let app, let process, let action):
                appId = app
                pid = process
                enforcement = action
            case .openDocument(let info): document = info
            case .postureWarning(let notice):
                appId = notice.appId
                posture = notice.results
            case .didSignOut(let name): provider = name
            }
        }
    }
}
