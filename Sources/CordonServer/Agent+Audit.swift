import CordonProtocol
import CordonStore
import NIOCore

extension Agent {
    /// Queues records for the next group commit; the future completes once they are stored
    /// (or the write failed, which is logged: a full disk never stops a decision).
    @discardableResult
    func writeAudit(_ records: [AuditRecord]) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        auditBatch += records
        auditBatchPromises.append(promise)
        flushAudit()
        return promise.futureResult
    }

    /// Completes once every record queued so far is stored (or its write failed).
    func auditStored() -> EventLoopFuture<Void> {
        writeAudit([])
    }

    /// Stores the pending batch in one transaction, unless a write is in flight; with nothing
    /// to store, whoever waits is answered at once.
    private func flushAudit() {
        guard !auditWriteInFlight else { return }
        guard !auditBatch.isEmpty else {
            let waiting = auditBatchPromises
            auditBatchPromises = []
            for promise in waiting { promise.succeed() }
            return
        }
        auditWriteInFlight = true
        let records = auditBatch
        let promises = auditBatchPromises
        auditBatch = []
        auditBatchPromises = []
        let database = self.database
        let retention = configuration.auditRetention
        auditWrites += records.count
        let prune = auditWrites >= 1000
        if prune { auditWrites = 0 }
        storePool.runIfActive(eventLoop: loop) { () throws -> [AuditRecord] in
            let stored = try database.appendAudit(records)
            if prune { try database.pruneAudit(retention, now: records.last?.time ?? 0) }
            return stored
        }.assumeIsolated().whenComplete { [self] result in
            auditWriteInFlight = false
            switch result {
            case .success(let stored):
                if let problem = auditProblem {
                    logger.notice(
                        "audit log writes again", metadata: ["records only in this log": "\(problem.unstored)"])
                    auditProblem = nil
                }
                streamAudit(stored)
            case .failure(let error):
                logger.error("audit log write failed; the records are in this log only: \(error)")
                for record in records {
                    logger.error(
                        "unstored audit record",
                        metadata: [
                            "time": "\(record.time)", "category": "\(record.category)",
                            "action": "\(record.action ?? "-")",
                            "outcome": "\(record.outcome)", "app": "\(record.appId ?? "-")",
                            "reason": "\(record.reason)",
                            "rules": "\(record.rules)",
                        ])
                }
                auditProblem = AuditProblem(
                    since: auditProblem?.since ?? clock(), unstored: (auditProblem?.unstored ?? 0) + records.count,
                    error: "\(error)")
                streamAudit(records)
            }
            for promise in promises { promise.succeed() }
            flushAudit()
        }
    }

    private func streamAudit(_ records: [AuditRecord]) {
        for follower in auditFollowers.values {
            let matching = records.filter { follower.appFilter == nil || follower.appFilter == $0.appId }
            if follower.historySent {
                send(matching, to: follower)
            } else {
                follower.held.append(contentsOf: matching)  // Sent after the history, in order.
            }
        }
    }

    private func send(_ records: [AuditRecord], to follower: AuditFollower) {
        let encoder = ReplyEncoder(allocator: follower.subscriber.connection.channel.allocator)
        for record in records where record.id == 0 || record.id > follower.lastSentId {
            follower.lastSentId = max(follower.lastSentId, record.id)
            deliver(
                encoder.reply(AuditFollowReply(record: Self.wire(record)), continues: true), to: follower.subscriber)
        }
    }

    /// Answers `Query`, or starts `Follow` (history first, then new records).
    func audit(_ parameters: AuditQueryParameters, follow: Bool, connection: AgentConnection) -> CallOutcome {
        let database = self.database
        let query = AuditQuery(
            since: parameters.since, appId: parameters.appId, limit: min(parameters.limit ?? 1000, 100_000))
        let encoder = ReplyEncoder(allocator: connection.channel.allocator)
        let history = storePool.runIfActive(eventLoop: loop) { try database.queryAudit(query) }
        guard follow else {
            return .deferred(
                history.map { encoder.reply(AuditQueryReply(records: $0.map(Self.wire))) }.recover { error in
                    encoder.error(CordonError.internalError(reason: "the audit log cannot be read").varlinkError)
                })
        }
        let follower = AuditFollower(
            subscriber: Subscriber(connection: connection, capacity: configuration.limits.maxQueuedEvents),
            appFilter: parameters.appId)
        auditFollowers[connection.id] = follower
        history.assumeIsolated().whenComplete { [self] result in
            // History first, then whatever was written meanwhile; ids never repeat.
            send((try? result.get()) ?? [], to: follower)
            follower.historySent = true
            send(follower.held, to: follower)
            follower.held = []
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

/// A connection following the audit log: live records wait until its history has been sent.
/// Confined to the agent's event loop (not `Sendable`).
final class AuditFollower {
    let subscriber: Subscriber
    let appFilter: String?
    var historySent = false
    var held: [AuditRecord] = []
    var lastSentId: Int64 = 0

    init(subscriber: Subscriber, appFilter: String?) {
        self.subscriber = subscriber
        self.appFilter = appFilter
    }
}
