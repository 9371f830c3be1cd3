import CordonProtocol
import Foundation

/// A typed lifecycle event, as an app or tool receives it.
public struct CordonEvent: Sendable, Equatable {
    /// What happened.
    public var kind: EventKind
    /// Why.
    public var reason: EventReason
    /// The agent's sequence number (0 for an event CordonKit made up, e.g. a lost connection).
    public var seq: Int
    public var time: Date
    /// The container's state after the event.
    public var state: LifecycleState
    /// For `encryptionKeyUnavailable`: when the acknowledgement is due.
    public var ackDeadline: Date?
    /// For `policyDidChange`: the version of the policy now in force (compare with
    /// `CordonClient.policyStatus().version`).
    public var policyVersion: String?
    /// For `appEnforced`: the app and process the agent acted on, and what it did.
    public var appId: String?
    public var pid: Int?
    public var enforcement: EnforcementAction?
    /// For `openDocument`: the document another app handed to this one.
    public var document: DocumentInfo?

    public init(
        kind: EventKind, reason: EventReason, seq: Int, time: Date, state: LifecycleState, ackDeadline: Date? = nil,
        policyVersion: String? = nil, appId: String? = nil, pid: Int? = nil, enforcement: EnforcementAction? = nil,
        document: DocumentInfo? = nil
    ) {
        self.appId = appId
        self.pid = pid
        self.enforcement = enforcement
        self.document = document
        self.kind = kind
        self.reason = reason
        self.seq = seq
        self.time = time
        self.state = state
        self.ackDeadline = ackDeadline
        self.policyVersion = policyVersion
    }

    init(_ event: WireEvent) {
        self.init(
            kind: event.kind, reason: event.reason, seq: event.seq, time: Date(timeIntervalSince1970: event.time),
            state: event.state, ackDeadline: event.ackDeadline.map { Date(timeIntervalSince1970: $0) },
            policyVersion: event.policyVersion, appId: event.appId, pid: event.pid, enforcement: event.enforcement,
            document: event.document)
    }

    /// Whether the key is available after this event.
    public var keyAvailable: Bool { state.keyAvailable }

    /// The event CordonKit reports when the agent is gone: the key must be treated as revoked.
    public static func agentUnavailable(lastSeq: Int) -> CordonEvent {
        CordonEvent(
            kind: .encryptionKeyUnavailable, reason: .agentUnavailable, seq: lastSeq, time: Date(),
            state: .lockedNoKey)
    }
}

/// The typed event stream of one subscription connection.
struct EventStream: Sendable {
    let connection: VarlinkClientConnection
    let events: AsyncThrowingStream<CordonEvent, any Error>

    static func open(socketPath: String, token: String?) async throws -> EventStream {
        let connection = try await VarlinkClientConnection.connect(path: socketPath)
        let events = try connection.typedStream(
            .subscribe, SubscribeParameters(token: token), as: SubscribeReply.self
        ) { CordonEvent($0.event) }
        return EventStream(connection: connection, events: events)
    }
}
