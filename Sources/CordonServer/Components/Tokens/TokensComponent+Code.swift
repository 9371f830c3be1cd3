import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonTokens
import NIOCore

/// `io.cordon.Tokens.Code`: a code of one token, answered on the loop when its sealed record is
/// held (`TokenCodeCache`), else from the store pool; an HOTP counter is stored advanced first,
/// always on the pool. The audit record (serial only) is stored after the reply
/// (`auditAfterReply`, docs/RELIABILITY.md, "Audit"); a refusal's before it.
extension TokensComponent {
    func code(_ parameters: TokenCodeParameters, appId: String, encoder: ReplyEncoder) -> CallOutcome {
        let sealer: RecordSealer
        do {
            sealer = try self.sealer()
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        let (database, now, serial, pin) = (host.database, host.clock(), parameters.serial, parameters.pin)
        let pinRequired = host.policy.policy[PolicyKeys.Tokens.pinRequired].value == true
        if let held = codeCache[serial: serial] {
            // A token without a counter: nothing to store, so no thread hop.
            do {
                let frame = encoder.reply(
                    try Self.code(of: held, sealer: sealer, pin: pin, pinRequired: pinRequired, now: now))
                let record = entry(appId, "tokens.code", outcome: "allow", reason: "serial \(serial)")
                guard let full = host.auditAfterReply([record]) else { return .reply(frame) }
                return .deferred(full.map { frame })
            } catch {
                return .deferred(refused(error, appId: appId, action: "tokens.code", encoder: encoder))
            }
        }
        let epoch = codeCache.epoch
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> (TokenCodeReply, StoredToken) in
            guard let stored = try database.token(serial: serial) else {
                throw CordonError.tokenNotFound(serial: serial)
            }
            if let counter = stored.counter {
                // Durably past this counter before its code exists (docs/THREAT-MODEL.md).
                guard try database.advanceTokenCounter(serial: serial, from: counter) else {
                    throw CordonError.tokenNotFound(serial: serial)
                }
            }
            let reply = try Self.code(of: stored, sealer: sealer, pin: pin, pinRequired: pinRequired, now: now)
            return (reply, stored)
        }
        let kept = work.assumeIsolated().map { [self] (reply, stored) -> TokenCodeReply in
            codeCache.keep(stored, readIn: epoch)
            return reply
        }.nonisolated()
        return finish(kept, appId: appId, action: "tokens.code", encoder: encoder, routine: true) {
            (reply: TokenCodeReply) in
            (encoder.reply(reply), "serial \(serial)")
        }
    }

    /// The code of `stored` at `now` (an HOTP token at its stored counter, which the caller has
    /// already moved past on the disk). HOTP answers only the current counter's code: the next
    /// one would be a valid code held before its turn (docs/THREAT-MODEL.md, "Software tokens").
    static func code(of stored: StoredToken, sealer: RecordSealer, pin: String?, pinRequired: Bool, now: Double)
        throws(CordonError) -> TokenCodeReply
    {
        var record = try Self.open(stored, with: sealer)
        if pinRequired { record.pin = nil }
        if case .securID(let token) = record.secret, token.pinMode != .pinless, (pin ?? record.pin ?? "").isEmpty {
            throw .pinRequired(serial: stored.serial)
        }
        if let counter = stored.counter, case .oath(var token) = record.secret {
            token.kind = .hotp(counter: counter)
            record.secret = .oath(token)
        }
        let code: TokenCode
        do throws(TokenFormatError) {
            code = try record.code(at: Int64(now), pin: pin)
        } catch {
            throw Self.cordonError(error)
        }
        let counted = record.counter != nil
        return TokenCodeReply(
            serial: stored.serial, code: code.code, next: counted ? nil : code.next,
            secondsLeft: counted ? 0 : code.secondsLeft, interval: code.interval)
    }
}
