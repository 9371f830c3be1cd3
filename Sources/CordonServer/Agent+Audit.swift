import CordonCore
import CordonProtocol
import CordonStore
import NIOCore

extension Agent {
    /// Writes audit records off the loop, then streams them to followers. A failing write (a full
    /// disk) is logged and never stops a decision or an enforcement.
    func writeAudit(_ records: [AuditRecord]) {
        let database = self.database
        let retention = configuration.auditRetention
        auditWrites += records.count
        let prune = auditWrites >= 1000
        if prune { auditWrites = 0 }
        storePool.runIfActive(eventLoop: loop) { () throws -> [AuditRecord] in
            let stored = try database.appendAudit(records)
            if prune { try database.pruneAudit(retention, now: records.last?.time ?? 0) }
            return stored
        }.whenComplete { [self] result in
            switch result {
            case .success(let stored): streamAudit(stored)
            case .failure(let error):
                logger.error("audit log write failed; the records are in this log only: \(error)")
                streamAudit(records)
            }
        }
    }

    private func streamAudit(_ records: [AuditRecord]) {
        guard !auditFollowers.isEmpty else { return }
        let encoder = ReplyEncoder(allocator: ByteBufferAllocator())
        for record in records {
            let frame = encoder.reply(AuditFollowReply(record: Self.wire(record)), continues: true)
            for (subscriber, appFilter) in auditFollowers.values where appFilter == nil || appFilter == record.appId {
                deliver(frame, to: subscriber)
            }
        }
    }

    /// Answers `Query`, or starts `Follow` (history first, then new records).
    func audit(_ parameters: AuditQueryParameters, follow: Bool, connection: AgentConnection) -> CallOutcome {
        let database = self.database
        let query = AuditQuery(since: parameters.since, appId: parameters.appId, limit: min(parameters.limit ?? 1000, 100_000))
        let encoder = ReplyEncoder(allocator: connection.channel.allocator)
        let history = storePool.runIfActive(eventLoop: loop) { try database.queryAudit(query) }
        guard follow else {
            return .deferred(
                history.map { encoder.reply(AuditQueryReply(records: $0.map(Self.wire))) }.recover { error in
                    encoder.error(CordonError.internalError(reason: "the audit log cannot be read").varlinkError)
                })
        }
        let subscriber = Subscriber(connection: connection, capacity: configuration.limits.maxQueuedEvents)
        auditFollowers[connection.id] = (subscriber, parameters.appId)
        let id = connection.id
        history.whenSuccess { [self] records in
            guard let (subscriber, _) = auditFollowers[id] else { return }
            for record in records {
                deliver(encoder.reply(AuditFollowReply(record: Self.wire(record)), continues: true), to: subscriber)
            }
        }
        return .streaming
    }

    static func wire(_ record: AuditRecord) -> WireAuditRecord {
        WireAuditRecord(
            id: Int(record.id), time: record.time, category: record.category, appId: record.appId,
            action: record.action, outcome: record.outcome, reason: record.reason,
            rules: record.rules.split(separator: "\n").map(String.init))
    }
}
