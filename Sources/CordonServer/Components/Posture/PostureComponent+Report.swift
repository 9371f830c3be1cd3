import CordonLifecycle
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonTrust
import Foundation
import NIOCore

/// Signed posture reports (docs/PROTOCOL.md, "Signed posture reports"): the checks, who asked,
/// the policy version and the time, signed by the device key. Only a verified managed registration
/// or, with the passcode, the CLI may ask (docs/THREAT-MODEL.md, "Posture reports"), and only while
/// the container is unlocked: the device key is sealed under the master key.
extension PostureComponent {
    /// The name the CLI gets as requester in audit records.
    static let cliRequester = "io.cordon.cli"

    func report(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(PostureReportParameters.self)
        if let problem = PostureReportParameters.problem(with: parameters.nonce) {
            throw CordonError.invalidNonce(reason: problem).varlinkError
        }
        let encoder = call.encoder
        if let passcode = parameters.passcode {
            try typed { () throws(CordonError) in try checkUnlocked() }
            return host.authorized(passcode: passcode, encoder: encoder) { [self] in
                sign(parameters.nonce, requester: PostureRequester(kind: "cli"), encoder: encoder)
            }
        }
        // Only a verified managed registration speaks for an app (docs/THREAT-MODEL.md).
        let registration = try typed { () throws(CordonError) in
            do throws(CordonError) {
                return try host.verifiedRegistration(token: parameters.token, caller: call.connection, for: .data)
            } catch {
                host.writeAudit([
                    AuditEntry(
                        time: host.clock(), category: "posture", action: "posture.report", outcome: "refused",
                        reason: "not a verified managed registration and no passcode: \(error.varlinkName)")
                ])
                throw error
            }
        }
        try typed { () throws(CordonError) in try checkUnlocked() }
        let requester = PostureRequester(
            kind: "app", appId: registration.appId, executable: registration.executable, pid: registration.pid)
        return sign(parameters.nonce, requester: requester, encoder: encoder)
    }

    func publicKey(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        let sealer = try? typed { () throws(CordonError) in try deviceKeySealer() }
        let database = host.database
        let now = host.clock()
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> [UInt8] in
            if let stored = try database.deviceKey() { return stored.publicKey }
            guard let sealer else { throw CordonError.keyUnavailable(state: "locked") }
            return try Self.deviceKey(database, sealer: sealer, now: now).publicKey
        }
        let state = host.lifecycleState.rawValue
        return .deferred(
            work.map { key in
                encoder.reply(
                    PostureKeyReply(
                        publicKey: Data(key).base64EncodedString(), keyId: DeviceKeySigning.keyId(of: key)))
            }.recover { error in
                encoder.error(Self.cordonError(error, state: state).varlinkError)
            })
    }

    private func checkUnlocked() throws(CordonError) {
        guard host.lifecycleState == .unlocked else { throw .keyUnavailable(state: host.lifecycleState.rawValue) }
    }

    /// The sealer of the device key, derived now (the master key must be held).
    private func deviceKeySealer() throws(CordonError) -> RecordSealer {
        guard let key = host.purposeKey(StoredDeviceKey.purpose) else {
            throw .keyUnavailable(state: host.lifecycleState.rawValue)
        }
        defer { key.zero() }
        return RecordSealer(key: key)
    }

    /// Reads the checks, then signs the report on the store pool.
    private func sign(_ nonce: String, requester: PostureRequester, encoder: ReplyEncoder) -> CallOutcome {
        let sealer: RecordSealer
        do {
            try checkUnlocked()
            sealer = try deviceKeySealer()
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        let database = host.database
        let pool = host.storePool
        let loop = host.loop
        let state = host.lifecycleState.rawValue
        let version = host.policy.versionHash
        let audited = requester.appId ?? Self.cliRequester
        let clock = host.clock
        let signed = current().flatMap { checks in
            let now = clock()
            return pool.runIfActive(eventLoop: loop) { () throws -> PostureSignedReport in
                let key = try Self.deviceKey(database, sealer: sealer, now: now)
                let payload = PostureReportPayload(
                    nonce: nonce, time: Int((now * 1000).rounded(.down)), requester: requester,
                    policyVersion: version, checks: checks, keyId: DeviceKeySigning.keyId(of: key.publicKey))
                let bytes = try payload.canonicalBytes()
                let secret = try sealer.open(key.sealed, slot: StoredDeviceKey.slot)
                defer { secret.zero() }
                let signature = try secret.withUnsafeBytes { raw in
                    try DeviceKeySigning.sign(PostureSignedReport.signedMessage(bytes), privateKey: raw)
                }
                return PostureSignedReport(payload: bytes, signature: signature, publicKey: key.publicKey)
            }
        }
        return .deferred(
            signed.assumeIsolated().map { [self] report in
                host.writeAudit([
                    AuditEntry(
                        time: host.clock(), category: "posture", appId: audited, action: "posture.report",
                        outcome: "signed", reason: "a signed posture report for nonce \(nonce)")
                ])
                return encoder.reply(report)
            }.recover { error in
                encoder.error(Self.cordonError(error, state: state).varlinkError)
            }.nonisolated())
    }

    /// The stored device key, made and stored now when there is none (on the store pool).
    static func deviceKey(_ database: CordonDatabase, sealer: RecordSealer, now: Double) throws -> StoredDeviceKey {
        if let stored = try database.deviceKey() { return stored }
        var (secret, publicKey) = DeviceKeySigning.generate()
        defer { secret.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let sealed = try sealer.seal(secret, slot: StoredDeviceKey.slot)
        return try database.storeDeviceKeyIfAbsent(
            StoredDeviceKey(publicKey: publicKey, sealed: sealed, createdAt: now))
    }

    private static func cordonError(_ error: any Error, state: String) -> CordonError {
        switch error {
        case let error as CordonError: return error
        case let error as RecordSealError:
            return .internalError(reason: "the device key does not open (\(error))")
        default: return .internalError(reason: "the posture report failed: \(error)")
        }
    }
}
