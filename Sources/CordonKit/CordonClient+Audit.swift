import CordonProtocol
import Foundation

/// One audit record: a decision, an enforcement step or a policy change.
///
/// Encodes as the wire `Record` (`time` in Unix seconds).
public struct AuditEntry: Sendable, Equatable, Codable, Identifiable {
    /// The record's id; ids grow with time.
    public var id: Int
    /// When it was written.
    public var time: Date
    /// What kind of record, e.g. `decision`, `enforcement`, `policy`.
    public var category: String
    /// The app concerned, if any.
    public var appId: String?
    /// The action, e.g. `pasteboard.copy`, if any.
    public var action: String?
    /// The outcome, e.g. `allow` or `deny` for a decision.
    public var outcome: String
    /// A sentence saying why.
    public var reason: String
    /// The deciding rules, as `FILE#POINTER`.
    public var rules: [String]

    /// Creates a record.
    public init(
        id: Int, time: Date, category: String, appId: String? = nil, action: String? = nil, outcome: String,
        reason: String, rules: [String] = []
    ) {
        self.id = id
        self.time = time
        self.category = category
        self.appId = appId
        self.action = action
        self.outcome = outcome
        self.reason = reason
        self.rules = rules
    }

    init(_ wire: WireAuditRecord) {
        self.init(
            id: wire.id, time: Date(timeIntervalSince1970: wire.time), category: wire.category, appId: wire.appId,
            action: wire.action, outcome: wire.outcome, reason: wire.reason, rules: wire.rules)
    }

    /// The wire form.
    var wire: WireAuditRecord {
        WireAuditRecord(
            id: id, time: time.timeIntervalSince1970, category: category, appId: appId, action: action,
            outcome: outcome, reason: reason, rules: rules)
    }

    /// Decodes the wire `Record`.
    public init(from decoder: any Decoder) throws {
        self.init(try WireAuditRecord(from: decoder))
    }

    /// Encodes as the wire `Record`.
    public func encode(to encoder: any Encoder) throws {
        try wire.encode(to: encoder)
    }
}

extension CordonClient {
    /// Audit records, oldest first: those since `since` (all when `nil`), for `appId` (every app
    /// when `nil`), at most `limit` of them (the newest).
    ///
    /// ```swift
    /// let lastHour = try await client.audit(since: Date().addingTimeInterval(-3600), limit: 100)
    /// for entry in lastHour where entry.outcome == "denied" { print(entry.appId ?? "-", entry.reason) }
    /// ```
    public func audit(since: Date? = nil, appId: String? = nil, limit: Int? = nil) async throws -> [AuditEntry] {
        let parameters = AuditQueryParameters(since: since?.timeIntervalSince1970, appId: appId, limit: limit)
        return try await connection.call(.queryAudit, parameters, returning: AuditQueryReply.self).records.map(
            AuditEntry.init)
    }

    /// Streams audit records on a new connection as they are written (and, with `since`, the
    /// agent's records since then first), for `appId` or every app.
    ///
    /// ```swift
    /// for try await entry in try await client.followAudit() {
    ///     print(entry.time, entry.category, entry.outcome, entry.reason)
    /// }
    /// ```
    /// The stream ends with `CordonClientError.connectionClosed` when the agent goes away;
    /// cancelling the consuming task closes the connection.
    public func followAudit(since: Date? = nil, appId: String? = nil) async throws
        -> AsyncThrowingStream<AuditEntry, any Error>
    {
        let connection = try await VarlinkClientConnection.connect(path: socketPath)
        do {
            return try connection.typedStream(
                .followAudit, AuditQueryParameters(since: since?.timeIntervalSince1970, appId: appId, limit: nil),
                as: AuditFollowReply.self
            ) { AuditEntry($0.record) }
        } catch {
            await connection.close()
            throw error
        }
    }
}
