import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonSystem
import CordonTokens
import Foundation
import NIOCore

/// Software tokens (`io.cordon.Tokens`, docs/ARCHITECTURE.md "Tokens"): SecurID, HOTP and TOTP
/// tokens imported into the container's `token` table, their records sealed under the tokens
/// purpose key of the master key.
///
/// Codes go only to a verified managed registration the policy lists in `tokens.codeReaders`, or,
/// with the passcode (checked and counted by the lifecycle machine), to the CLI when
/// `tokens.cliReadsCodes` allows; only while `tokens.dataAccess` allows; every code read is audited
/// (app and serial, never the code, seed or PIN). Import, rename, remove and reset need the
/// passcode. SQLite and AES-GCM run on the store pool.
final class TokensComponent: InterfaceComponent {
    /// The name the audit log and the binding id give the CLI (a caller with the passcode and no
    /// managed registration).
    static let cliAppId = "io.cordon.cli"

    unowned let host: any ComponentHost
    /// The tokens key generation (`["tokens", generation]`); a reset moves to the next.
    var generation: Int
    /// This machine's id (`/etc/machine-id`), for binding ids; nil when it cannot be read.
    let machineID: [UInt8]?
    /// The keys of ``generation`` while the state allows reading (``openedKeys()``), derived once and not
    /// on every code read: dropped, the OATH id key zeroed, on a lock that closes the tokens, on
    /// revocation, on a wipe and when the generation moves on.
    private var openKeys: (generation: Int, sealer: RecordSealer, oathIDKey: SecureBytes)?
    /// The sealed records `Code` answers on the loop (tokens without a counter).
    var codeCache = TokenCodeCache()

    init(host: any ComponentHost, machineIDPath: String = "/etc/machine-id") {
        self.host = host
        generation = (try? host.database.tokenGeneration()) ?? 0
        machineID = Self.readMachineID(machineIDPath)
    }

    func serve(_ method: Method.Tokens, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        let policy = host.policy.policy
        switch method {
        case .import:
            let parameters = try call.parameters(TokenImportParameters.self)
            guard let kind = TokenImporter.kind(of: parameters.data) else {
                throw CordonError.tokenFormat(
                    field: "data", reason: "it is not a CTF string, an SDTID file, an otpauth or otpauth-migration URI"
                ).varlinkError
            }
            if let allowed = policy[PolicyKeys.Tokens.importKinds].value, !allowed.contains(kind.rawValue) {
                audit(Self.cliAppId, "tokens.import", outcome: "refused", reason: "\(kind.rawValue) is not allowed")
                throw CordonError.tokenKindNotAllowed(kind: kind.rawValue).varlinkError
            }
            if let nickname = parameters.nickname { try typed { () throws(CordonError) in try Self.check(nickname) } }
            let appId = managedAppId(call.connection) ?? Self.cliAppId
            if kind == .ctkip { return try provision(parameters, appId: appId, encoder: encoder) }
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
                importTokens(parameters, appId: appId, encoder: encoder)
            }
        case .list:
            let parameters = try call.parameters(TokenPasscodeParameters.self)
            return try asReader(call, passcode: parameters.passcode) { [self] appId in
                list(appId: appId, encoder: encoder)
            }
        case .code:
            let parameters = try call.parameters(TokenCodeParameters.self)
            return try asReader(call, passcode: parameters.passcode) { [self] appId in
                code(parameters, appId: appId, encoder: encoder)
            }
        case .rename:
            let parameters = try call.parameters(TokenRenameParameters.self)
            try typed { () throws(CordonError) in try Self.check(parameters.nickname) }
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
                manage("tokens.rename", serial: parameters.serial, encoder: encoder) { database in
                    try database.renameToken(serial: parameters.serial, nickname: parameters.nickname)
                }
            }
        case .remove:
            let parameters = try call.parameters(TokenRemoveParameters.self)
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
                manage("tokens.remove", serial: parameters.serial, encoder: encoder) { database in
                    try database.removeToken(serial: parameters.serial)
                }
            }
        case .reset:
            let parameters = try call.parameters(TokenResetParameters.self)
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in reset(encoder: encoder)
            }
        }
    }

    /// Runs `body` for a caller that may read codes: a verified managed registration listed in
    /// `tokens.codeReaders`, or (with the passcode) the CLI when `tokens.cliReadsCodes` is true;
    /// in both cases only while `tokens.dataAccess` allows. Refusals are audited.
    private func asReader(
        _ call: ComponentCall, passcode: String?, then body: @escaping (String) -> CallOutcome
    ) throws(VarlinkError) -> CallOutcome {
        let policy = host.policy.policy
        if let passcode {
            guard policy[PolicyKeys.Tokens.cliReadsCodes].value else {
                audit(Self.cliAppId, "tokens.code", outcome: "refused", reason: "tokens.cliReadsCodes is false")
                throw CordonError.notCodeReader(appId: Self.cliAppId).varlinkError
            }
            try typed { () throws(CordonError) in try checkOpen() }
            return host.authorized(passcode: passcode, encoder: call.encoder) { body(Self.cliAppId) }
        }
        // Only a verified managed registration reads codes (docs/THREAT-MODEL.md).
        let registration = try typed { () throws(CordonError) in
            try host.verifiedRegistration(call.connection, for: .data)
        }
        guard policy[PolicyKeys.Tokens.codeReaders].value?.contains(registration.appId) == true else {
            audit(registration.appId, "tokens.code", outcome: "refused", reason: "not in tokens.codeReaders")
            throw CordonError.notCodeReader(appId: registration.appId).varlinkError
        }
        try typed { () throws(CordonError) in try checkOpen() }
        return body(registration.appId)
    }

    /// Refuses when `tokens.dataAccess` does not allow reading in the current state.
    func checkOpen() throws(CordonError) {
        let state = host.lifecycleState
        let access = host.policy.policy[PolicyKeys.Tokens.dataAccess].value
        guard state.keyAvailable, access != .whenUnlocked || state == .unlocked else {
            throw .tokensLocked(state: state.rawValue)
        }
    }

    /// The sealer of the current generation, checked against the state now.
    func sealer() throws(CordonError) -> RecordSealer { try openedKeys().sealer }

    /// A copy of the key of OATH ids for one import, checked against the state now: the import's
    /// own, zeroed when it is freed, so a lock that zeroes ``openKeys`` meanwhile races with nothing.
    func oathIDKey() throws(CordonError) -> SecureBytes {
        try openedKeys().oathIDKey.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// ``openKeys`` for the current generation, derived when they are not yet.
    private func openedKeys() throws(CordonError) -> (sealer: RecordSealer, oathIDKey: SecureBytes) {
        try checkOpen()
        if let openKeys, openKeys.generation == generation { return (openKeys.sealer, openKeys.oathIDKey) }
        closeKeys()
        guard let sealing = host.purposeKey(["tokens", String(generation)]),
            let oathID = host.purposeKey(["tokens", "oath-id"])
        else { throw .tokensLocked(state: host.lifecycleState.rawValue) }
        defer { sealing.zero() }
        let sealer = RecordSealer(key: sealing)
        openKeys = (generation, sealer, oathID)
        return (sealer, oathID)
    }

    func shutdown() { closeKeys() }

    /// Forgets the derived keys (``openKeys``), zeroing the OATH id key.
    func closeKeys() {
        openKeys?.oathIDKey.zero()
        openKeys = nil
        codeCache.invalidate()
    }

    /// The app id of the caller's verified managed registration, if it has one.
    private func managedAppId(_ connection: AgentConnection) -> String? {
        try? host.verifiedRegistration(connection, for: .data).appId
    }

    /// A full wipe takes the tokens with the master key: the table is emptied and a new
    /// generation begins.
    func observe(_ event: CordonEvent) {
        switch event.payload {
        case .didLock where host.policy.policy[PolicyKeys.Tokens.dataAccess].value == .whenUnlocked,
            .encryptionKeyUnavailable:
            closeKeys()
        case .wiped(appId: nil):
            closeKeys()
            let database = host.database
            host.storePool.runIfActive(eventLoop: host.loop) { try database.resetTokens() }.assumeIsolated()
                .whenComplete { [self] result in
                    switch result {
                    case .success(let next):
                        generation = next
                        codeCache.invalidate()
                    case .failure(let error): host.logger.error("could not delete the tokens: \(error)")
                    }
                }
        default:
            break
        }
    }

    /// Audits a call (never a code, seed or PIN).
    func audit(_ appId: String, _ action: String, outcome: String, reason: String) {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "tokens", appId: appId, action: action, outcome: outcome, reason: reason)
        ])
    }

    /// Refuses a nickname that is empty, over 32 characters or holds a control character.
    static func check(_ nickname: String) throws(CordonError) {
        guard (1...32).contains(nickname.count) else {
            throw .tokenFormat(field: "nickname", reason: "a nickname has 1 to 32 characters, not \(nickname.count)")
        }
        guard !nickname.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .tokenFormat(field: "nickname", reason: "it holds a control character")
        }
    }

    private static func readMachineID(_ path: String) -> [UInt8]? {
        guard let bytes = try? BoundedFile.read(path, limit: 128) else { return nil }
        return try? BindingID.parseMachineID(String(decoding: bytes, as: UTF8.self))
    }
}
