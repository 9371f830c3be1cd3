import CordonLifecycle
import CordonProtocol
import CordonStore
import Logging
import NIOCore

/// The audit writer: records queue for one group commit at a time on the store pool, and
/// connections following the log get each stored record (`io.cordon.Audit.Query`, `Follow`).
/// A failing store is reported (``problem``), never blocks a decision, and every unstored
/// record goes to the agent's log with its fields.
final class AuditLogComponent: InterfaceComponent {
    private unowned let host: any ComponentHost
    /// Connections streaming new audit records, with their app filter.
    private var followers: [ConnectionID: AuditFollower] = [:]
    private var writesSincePrune = 0
    /// Records waiting for the next group commit, and who waits for them.
    private var batch: [AuditEntry] = []
    private var batchPromises: [EventLoopPromise<Void>] = []
    /// Whether a record of the batch must be on the disk when it is stored (most must).
    private var batchOnDisk = false
    private var writeInFlight = false
    /// How many records the write in flight stores.
    private var inFlight = 0
    /// Records of routine reads queued after their reply left (``writeAfterReply(_:)``), waiting
    /// at most ``afterReplyDelay`` (or until ``afterReplyBatch`` wait) to join the next batch.
    private var afterReply: [AuditEntry] = []
    /// The journal index of the last record in `afterReply`, and in `batch`.
    private var afterReplyJournalUpTo: Int?
    private var batchJournalUpTo: Int?
    /// Where routine reads' records are copied before their reply (nil when the file cannot be
    /// opened or mapped: their replies then wait for the commit).
    private var journal: AuditJournal? {
        if let opened = openedJournal { return opened }
        let opened = AuditJournal(path: host.configuration.paths.dataDirectory + "/" + AuditJournal.fileName)
        openedJournal = .some(opened)
        return opened
    }
    /// The journal once the first routine read opened it (an inner nil: it could not be).
    private var openedJournal: AuditJournal??
    private var afterReplyTimer: Scheduled<Void>?
    /// Set at shutdown: the journal is emptied once everything in it is stored.
    private var stopping = false
    /// How long a routine read's record may wait before its group commit.
    static let afterReplyDelay = TimeAmount.milliseconds(50)
    /// This many waiting records are committed at once, without waiting for the delay.
    static let afterReplyBatch = 256
    /// Past this many records waiting or being stored, a routine read's reply waits for its
    /// record to be stored (a slow disk slows the reads down rather than growing the queue).
    static let maxQueued = 4096
    /// Set while audit writes fail; shown in `GetStatus`.
    private(set) var problem: AuditProblem?

    init(host: any ComponentHost) {
        self.host = host
    }

    private var loop: any EventLoop { host.loop }
    private var logger: Logger { host.logger }

    func serve(_ method: Method.Audit, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(AuditQueryParameters.self)
        let follow =
            switch method {
            case .query: false
            case .follow: true
            }
        if follow && !call.header.more { throw .expectedMore }
        return audit(parameters, follow: follow, connection: call.connection)
    }

    func connectionClosed(_ id: ConnectionID) {
        followers.removeValue(forKey: id)
    }

    /// Queues records for the next group commit; the future completes once they are stored
    /// (or the write failed, which is logged: a full disk never stops a decision). With `onDisk`
    /// false they may be committed without a sync (`CordonDatabase.appendAudit(_:onDisk:)`), unless
    /// another record of the same batch needs one.
    @discardableResult
    func write(_ records: [AuditEntry], onDisk: Bool = true) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        if !records.isEmpty && onDisk { batchOnDisk = true }
        // Whoever waits for the log waits for the routine reads' records queued before too.
        takeAfterReply()
        batch += marked(records)
        batchPromises.append(promise)
        flush()
        return promise.futureResult
    }

    /// Queues the records of a routine read (a code, a cached token) to be stored after its reply
    /// leaves: they join a group commit within ``afterReplyDelay``, or at once when
    /// ``afterReplyBatch`` wait, when anyone waits for the log (`write`, `stored`, a query), and
    /// at a lock, a revocation, a wipe and shutdown; committed without a sync of their own
    /// (docs/RELIABILITY.md, "Audit": what a killed agent or a power cut can lose). Nil when the
    /// reply may leave now; while more than ``maxQueued`` records wait, a future the reply waits
    /// for: these records stored.
    func writeAfterReply(_ records: [AuditEntry]) -> EventLoopFuture<Void>? {
        guard !records.isEmpty else { return nil }
        let marked = marked(records)
        guard afterReply.count + batch.count + inFlight + records.count <= Self.maxQueued,
            let index = journal?.append(marked)
        else {
            return write(records, onDisk: false)
        }
        afterReply += marked
        afterReplyJournalUpTo = index
        if afterReply.count >= Self.afterReplyBatch {
            takeAfterReply()
            flush()
        } else if afterReplyTimer == nil {
            afterReplyTimer = loop.assumeIsolated().scheduleTask(in: Self.afterReplyDelay) { [self] in
                afterReplyTimer = nil
                takeAfterReply()
                flush()
            }
        }
        return nil
    }

    /// How many routine reads' records wait for their group commit.
    var waitingAfterReply: Int { afterReply.count }

    /// Moves the routine reads' waiting records into the next batch.
    private func takeAfterReply() {
        afterReplyTimer?.cancel()
        afterReplyTimer = nil
        guard !afterReply.isEmpty else { return }
        batch += afterReply
        afterReply = []
        batchJournalUpTo = afterReplyJournalUpTo ?? batchJournalUpTo
        afterReplyJournalUpTo = nil
    }

    /// In test mode every record says so: nothing in it is what an administrator decided.
    private func marked(_ records: [AuditEntry]) -> [AuditEntry] {
        guard host.configuration.testMode else { return records }
        return records.map {
            var marked = $0
            marked.testMode = true
            return marked
        }
    }

    /// A lock, a revocation or a wipe stores the routine reads' records at once.
    func observe(_ event: CordonEvent) {
        switch event.payload {
        case .didLock, .encryptionKeyUnavailable, .wiped:
            takeAfterReply()
            flush()
        default: break
        }
    }

    /// Shutdown stores what waits (the pool finishes the work queued before it stops), and the
    /// journal is emptied once that is stored.
    func shutdown() {
        stopping = true
        if case .some(let journal?) = openedJournal { journal.emptyIfStored() }
        takeAfterReply()
        flush()
    }

    /// Completes once every record queued so far is stored (or its write failed).
    func stored() -> EventLoopFuture<Void> {
        write([])
    }

    /// Stores the pending batch in one transaction, unless a write is in flight; with nothing
    /// to store, whoever waits is answered at once.
    private func flush() {
        guard !writeInFlight else { return }
        guard !batch.isEmpty else {
            let waiting = batchPromises
            batchPromises = []
            for promise in waiting { promise.succeed() }
            return
        }
        writeInFlight = true
        inFlight = batch.count
        let records = batch
        let promises = batchPromises
        let onDisk = batchOnDisk
        let journaled = batchJournalUpTo.flatMap { upTo in journal.map { (run: $0.run, upTo: upTo) } }
        batchJournalUpTo = nil
        batch = []
        batchPromises = []
        batchOnDisk = false
        let database = host.database
        let retention = host.configuration.auditRetention
        writesSincePrune += records.count
        let prune = writesSincePrune >= 1000
        if prune { writesSincePrune = 0 }
        host.storePool.runIfActive(eventLoop: loop) { () throws -> [AuditEntry] in
            let stored = try database.appendAudit(records, onDisk: onDisk, journal: journaled)
            if prune { try database.pruneAudit(retention, now: records.last?.time ?? 0) }
            return stored
        }.assumeIsolated().whenComplete { [self] result in
            writeInFlight = false
            inFlight = 0
            switch result {
            case .success(let stored):
                if let past = problem {
                    logger.notice(
                        "audit log writes again", metadata: ["records only in this log": "\(past.unstored)"])
                    problem = nil
                }
                // What is journaled up to there is stored: its room in the journal may be reused.
                if let journal, let journaled {
                    journal.stored(upTo: journaled.upTo)
                    if stopping { journal.emptyIfStored() }
                }
                stream(stored)
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
                problem = AuditProblem(
                    since: problem?.since ?? host.clock(), unstored: (problem?.unstored ?? 0) + records.count,
                    error: "\(error)")
                stream(records)
            }
            for promise in promises { promise.succeed() }
            flush()
        }
    }

    private func stream(_ records: [AuditEntry]) {
        for follower in followers.values {
            let matching = records.filter { follower.appFilter == nil || follower.appFilter == $0.appId }
            if follower.historySent {
                send(matching, to: follower)
            } else {
                follower.held.append(contentsOf: matching)  // Sent after the history, in order.
            }
        }
    }

    private func send(_ records: [AuditEntry], to follower: AuditFollower) {
        let encoder = ReplyEncoder(allocator: follower.subscriber.connection.channel.allocator)
        for record in records where record.id == 0 || record.id > follower.lastSentId {
            follower.lastSentId = max(follower.lastSentId, record.id)
            host.deliver(
                encoder.reply(AuditFollowReply(record: record), continues: true), to: follower.subscriber)
        }
    }

    /// Answers `Query`, or starts `Follow` (history first, then new records).
    private func audit(_ parameters: AuditQueryParameters, follow: Bool, connection: AgentConnection) -> CallOutcome {
        let database = host.database
        let query = AuditQuery(
            since: parameters.since, appId: parameters.appId, limit: min(parameters.limit ?? 1000, 100_000))
        let encoder = ReplyEncoder(allocator: connection.channel.allocator)
        // What was queued before the query (a routine read's record after its reply) is in it.
        let (pool, loop) = (host.storePool, loop)
        let history = stored().flatMap { pool.runIfActive(eventLoop: loop) { try database.queryAudit(query) } }
        guard follow else {
            return .deferred(
                history.map { encoder.reply(AuditQueryReply(records: $0)) }.recover { error in
                    encoder.error(CordonError.internalError(reason: "the audit log cannot be read").varlinkError)
                })
        }
        let follower = AuditFollower(
            subscriber: Subscriber(connection: connection, capacity: host.configuration.limits.maxQueuedEvents),
            appFilter: parameters.appId)
        followers[connection.id] = follower
        history.assumeIsolated().whenComplete { [self] result in
            // History first, then whatever was written meanwhile; ids never repeat.
            send((try? result.get()) ?? [], to: follower)
            follower.historySent = true
            send(follower.held, to: follower)
            follower.held = []
        }
        return .streaming
    }
}

/// A connection following the audit log: live records wait until its history has been sent.
/// Confined to the agent's event loop (not `Sendable`).
final class AuditFollower {
    let subscriber: Subscriber
    let appFilter: String?
    var historySent = false
    var held: [AuditEntry] = []
    var lastSentId = 0

    init(subscriber: Subscriber, appFilter: String?) {
        self.subscriber = subscriber
        self.appFilter = appFilter
    }
}
