import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonTokens
import Foundation
import NIOCore

/// The calls of `TokensComponent` that reach the `token` table, run on the store pool.
extension TokensComponent {
    /// Decrypts, checks and stores the tokens of an import under the current generation.
    func importTokens(_ parameters: TokenImportParameters, appId: String, encoder: ReplyEncoder) -> CallOutcome {
        let sealer: RecordSealer
        let oathID: SecureBytes
        do {
            (sealer, oathID) = (try self.sealer(), try oathIDKey())
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        let deviceID = deviceID(of: appId)
        let request = TokenImportRequest(
            data: parameters.data, password: parameters.password, deviceID: deviceID, pin: parameters.pin)
        let (database, generation, now) = (host.database, generation, host.clock())
        let maximum = host.policy.policy[PolicyKeys.Tokens.maxTokens].value ?? 10
        let nickname = parameters.nickname
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> [TokenInfo] in
            // This copy is the closure's alone, so zeroing it zeroes the only one.
            var oathIDKey = oathID.withUnsafeBytes { Array($0) }
            defer { for index in oathIDKey.indices { oathIDKey[index] = 0 } }
            let records: [TokenRecord]
            do throws(TokenFormatError) {
                records = try TokenImporter.read(request, now: Int64(now), oathIDKey: oathIDKey).tokens
            } catch {
                throw Self.cordonError(error)
            }
            return try Self.store(
                records, sealer: sealer, database: database, generation: generation, nickname: nickname,
                maximum: maximum, now: now)
        }
        return finish(work, appId: appId, action: "tokens.import", encoder: encoder) { tokens in
            (encoder.reply(TokenListReply(tokens: tokens)), tokens.map(\.serial).joined(separator: ", "))
        }
    }

    /// Seals and inserts `records` under `generation` (on the store pool), all or nothing in one
    /// transaction: what is new is stored; an import that adds nothing is a duplicate; when the new
    /// tokens would take the table past `maximum`, nothing is stored.
    static func store(
        _ records: [TokenRecord], sealer: RecordSealer, database: CordonDatabase, generation: Int, nickname: String?,
        maximum: Int, now: Double
    ) throws -> [TokenInfo] {
        var batch: [StoredToken] = []
        for record in records {
            var plain = record.encoded()
            defer { for index in plain.indices { plain[index] = 0 } }
            batch.append(
                StoredToken(
                    serial: record.serial, kind: record.kind, nickname: nickname ?? Self.defaultNickname(record),
                    digits: record.digits, interval: record.interval, pinMode: record.pinMode, expiry: record.expiry,
                    generation: generation, sealed: try sealer.seal(plain, slot: ["token", record.serial]),
                    counter: record.counter, importedAt: now))
        }
        switch try database.insertTokens(batch, maximum: maximum) {
        case .limitReached(let maximum): throw CordonError.tokenLimit(maximum: maximum)
        case .inserted(let serials, let duplicates):
            // A batch imports what is new; only an import that adds nothing is a duplicate.
            if serials.isEmpty, let duplicate = duplicates.first {
                throw CordonError.duplicateToken(serial: duplicate)
            }
            let inserted = Set(serials)
            var reported: Set<String> = []
            return batch.filter { inserted.contains($0.serial) && reported.insert($0.serial).inserted }.map(Self.info)
        }
    }

    /// Every token's metadata and the device id of `appId`.
    func list(appId: String, encoder: ReplyEncoder) -> CallOutcome {
        let database = host.database
        let deviceId = deviceID(of: appId)
        let work = host.storePool.runIfActive(eventLoop: host.loop) { try database.tokens().map(Self.info) }
        return .deferred(
            work.map { encoder.reply(TokenListReply(tokens: $0, deviceId: deviceId)) }.recover {
                encoder.error(Self.varlinkError(any: $0))
            }
        )
    }

    /// The binding id of `appId` on this machine (what a bound SecurID token must be issued to),
    /// or nil when the machine id cannot be read.
    func deviceID(of appId: String) -> String? {
        machineID.map { BindingID.hex(BindingID.derive(machineID: $0, appID: BindingID.applicationID(for: appId))) }
    }

    /// Renames or removes token `serial`; audited.
    func manage(
        _ action: String, serial: String, encoder: ReplyEncoder,
        _ body: @escaping @Sendable (CordonDatabase) throws -> Bool
    ) -> CallOutcome {
        let database = host.database
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws in
            guard try body(database) else { throw CordonError.tokenNotFound(serial: serial) }
        }
        return finish(work, appId: Self.cliAppId, action: action, encoder: encoder) {
            (encoder.empty(), "serial \(serial)")
        }
    }

    /// Deletes every token and moves to a new key generation; audited.
    func reset(encoder: ReplyEncoder) -> CallOutcome {
        let database = host.database
        let work = host.storePool.runIfActive(eventLoop: host.loop) { try database.resetTokens() }
        return finish(work, appId: Self.cliAppId, action: "tokens.reset", encoder: encoder) { [self] next in
            generation = next
            return (encoder.empty(), "key generation \(next)")
        }
    }

    /// Audits the outcome of `work` and answers once the record is stored (on the disk), or, for a
    /// routine read's success (`routine`), at once with the record stored after the reply
    /// (`auditAfterReply`); a refusal's always on the disk first. Any other call changes the
    /// tokens: the held records are dropped before and after it (`TokenCodeCache`).
    func finish<T: Sendable>(
        _ work: EventLoopFuture<T>, appId: String, action: String, encoder: ReplyEncoder, routine: Bool = false,
        _ reply: @escaping (T) -> (frame: ByteBuffer, detail: String)
    ) -> CallOutcome {
        .deferred(
            work.assumeIsolated().flatMap { [self] value -> EventLoopFuture<ByteBuffer> in
                if !routine { codeCache.invalidate() }
                let (frame, detail) = reply(value)
                let record = [entry(appId, action, outcome: "allow", reason: detail)]
                let stored =
                    routine
                    ? host.auditAfterReply(record) ?? host.loop.makeSucceededVoidFuture() : host.writeAudit(record)
                return stored.map { frame }
            }.flatMapError { [self] error -> EventLoopFuture<ByteBuffer> in
                if !routine { codeCache.invalidate() }
                return refused(error, appId: appId, action: action, encoder: encoder)
            }.nonisolated())
    }

    /// A refusal's frame, once its audit record is on the disk.
    func refused(_ error: any Error, appId: String, action: String, encoder: ReplyEncoder)
        -> EventLoopFuture<ByteBuffer>
    {
        let typed = Self.varlinkError(any: error)
        let frame = encoder.error(typed)
        return host.writeAudit([entry(appId, action, outcome: "refused", reason: typed.name)]).map { frame }
    }

    func entry(_ appId: String, _ action: String, outcome: String, reason: String) -> AuditEntry {
        AuditEntry(
            time: host.clock(), category: "tokens", appId: appId, action: action, outcome: outcome, reason: reason)
    }

    /// The stored record of `stored`, opened.
    static func open(_ stored: StoredToken, with sealer: RecordSealer) throws(CordonError) -> TokenRecord {
        // Decoded straight from the opened bytes the sealer lends and zeroes: the record is plain
        // memory once decoded anyway, so a locked copy (`SecureBytes`: an allocation, `mlock` and
        // `munlock` per code) bought nothing (docs/PERFORMANCE.md, "Data calls on the loop").
        let decoded: Result<TokenRecord, TokenFormatError>
        do {
            decoded = try sealer.withOpened(stored.sealed, slot: ["token", stored.serial]) { plain in
                var bytes = Array(plain)
                defer { for index in bytes.indices { bytes[index] = 0 } }
                return Result { () throws(TokenFormatError) -> TokenRecord in try TokenRecord.decode(bytes) }
            }
        } catch {
            throw .tokenFormat(field: "record", reason: "the stored token does not open (changed on disk)")
        }
        switch decoded {
        case .success(let record): return record
        case .failure(let error): throw cordonError(error)
        }
    }

    static func info(_ stored: StoredToken) -> TokenInfo {
        TokenInfo(
            serial: stored.serial, kind: stored.kind, nickname: stored.nickname, digits: stored.digits,
            interval: stored.interval, pinMode: stored.pinMode, expiry: stored.expiry.map { Int($0) },
            importedAt: stored.importedAt)
    }

    /// `issuer:account` for OATH (at most 32 characters), the serial for SecurID.
    static func defaultNickname(_ record: TokenRecord) -> String {
        guard case .oath(let token) = record.secret else { return record.serial }
        let label = [token.issuer, token.account].filter { !$0.isEmpty }.joined(separator: ":")
        return label.isEmpty ? record.serial : String(label.prefix(32))
    }

    /// A reader's error as the typed error it answers (naming the field, never a secret).
    static func cordonError(_ error: TokenFormatError) -> CordonError {
        switch error {
        case .invalidField(let field, let reason): .tokenFormat(field: field, reason: reason)
        case .malformed(let format, let offset, let reason):
            .tokenFormat(field: format, reason: "at byte \(offset): \(reason)")
        case .checksumMismatch(let field):
            .tokenFormat(field: field, reason: "the checksum does not match (garbled or altered input)")
        case .passwordRequired, .wrongPassword: .tokenFormat(field: "password", reason: error.description)
        case .deviceIDRequired, .wrongDevice: .tokenBoundElsewhere(reason: error.description)
        case .expired(let day): .tokenExpired(expiryDay: day)
        case .invalidPIN(let reason): .tokenFormat(field: "pin", reason: reason)
        }
    }

    /// Any error of the pool as a varlink error.
    static func varlinkError(any error: any Error) -> VarlinkError {
        if let error = error as? CordonError { return error.varlinkError }
        if let error = error as? TokenFormatError { return cordonError(error).varlinkError }
        if let error = error as? StateAnchorError {
            return CordonError.stateRolledBack(reason: "\(error)").varlinkError
        }
        return CordonError.internalError(reason: "tokens: \(error)").varlinkError
    }
}
