import CordonProtocol
import Foundation

extension CordonClient {
    /// Audit records, oldest first: those since `since` (all when `nil`), for `appId` (every app
    /// when `nil`), at most `limit` of them (the newest).
    ///
    /// ```swift
    /// let lastHour = try await client.audit(since: Date().addingTimeInterval(-3600), limit: 100)
    /// for entry in lastHour where entry.outcome == "deny" { print(entry.appId ?? "-", entry.reason) }
    /// ```
    public func audit(since: Date? = nil, appId: String? = nil, limit: Int? = nil) async throws -> [AuditEntry] {
        let parameters = AuditQueryParameters(since: since?.timeIntervalSince1970, appId: appId, limit: limit)
        return try await connection.call(.queryAudit, parameters, returning: AuditQueryReply.self).records
    }

    /// Streams audit records on a new connection as they are written (and, with `since`, the
    /// agent's records since then first), for `appId` or every app.
    ///
    /// ```swift
    /// for try await entry in try await client.followAudit() {
    ///     print(entry.date, entry.category, entry.outcome, entry.reason)
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
            ) { $0.record }
        } catch {
            await connection.close()
            throw error
        }
    }
}
