import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonTokens
import NIOCore

/// CT-KIP imports (docs/ARCHITECTURE.md, "Tokens"): the exchange runs over HTTPS off the event
/// loop (`CTKIPTransport`), the token it gives is stored like any import.
extension TokensComponent {
    /// Checks a CT-KIP import against the policy, then, with the passcode, provisions and stores
    /// the token. A retry without certificate validation is refused unless
    /// `tokens.ctkipAllowInsecure` is true, and audited either way.
    func provision(_ parameters: TokenImportParameters, appId: String, encoder: ReplyEncoder) throws(VarlinkError)
        -> CallOutcome
    {
        let provisioning = try typed { () throws(CordonError) in
            do throws(TokenFormatError) {
                return try CTKIPProvisioning.parse(parameters.data)
            } catch {
                throw Self.cordonError(error)
            }
        }
        let insecure = parameters.insecure == true
        if insecure, !host.policy.policy[PolicyKeys.Tokens.ctkipAllowInsecure].value {
            audit(
                appId, "tokens.import", outcome: "refused",
                reason: "CT-KIP from \(provisioning.server) without certificate validation: "
                    + "tokens.ctkipAllowInsecure is false")
            throw CordonError.ctkipInsecureNotAllowed(server: provisioning.server).varlinkError
        }
        return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
            provision(provisioning, insecure: insecure, nickname: parameters.nickname, appId: appId, encoder: encoder)
        }
    }

    private func provision(
        _ provisioning: CTKIPProvisioning, insecure: Bool, nickname: String?, appId: String, encoder: ReplyEncoder
    ) -> CallOutcome {
        let sealer: RecordSealer
        do {
            sealer = try self.sealer()
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        if insecure {
            audit(
                appId, "tokens.import.insecure", outcome: "allow",
                reason: "CT-KIP from \(provisioning.server) without certificate validation (tokens.ctkipAllowInsecure)")
        }
        let transport = CTKIPTransport(caFile: host.configuration.ctkipCAFile)
        let (database, generation, loop, pool) = (host.database, generation, host.loop, host.storePool)
        let maximum = host.policy.policy[PolicyKeys.Tokens.maxTokens].value ?? 10
        let clock = host.clock
        let fetched = loop.makeFutureWithTask { () async throws -> SecurIDToken in
            try await transport.provision(provisioning, insecure: insecure)
        }
        let work = fetched.flatMap { token in
            pool.runIfActive(eventLoop: loop) { () throws -> [TokenInfo] in
                let now = clock()
                do throws(TokenFormatError) {
                    try token.checkNotExpired(at: Int64(now))
                } catch {
                    throw Self.cordonError(error)
                }
                return try Self.store(
                    [TokenRecord(serial: token.serial, secret: .securID(token))], sealer: sealer, database: database,
                    generation: generation, nickname: nickname, maximum: maximum, now: now)
            }
        }
        return finish(work, appId: appId, action: "tokens.import", encoder: encoder) { tokens in
            (
                encoder.reply(TokenListReply(tokens: tokens)),
                "CT-KIP from \(provisioning.server): \(tokens.map(\.serial).joined(separator: ", "))"
            )
        }
    }
}
