import CordonAppStorage
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore

/// Each app's encrypted key-value records (`io.cordon.Storage`), for apps in any language: the
/// same file and record format as CordonKit's `SecureStore` (`AppStorage`, docs/ARCHITECTURE.md
/// "Storage").
///
/// Records are keyed by the caller's verified managed registration, never by an app id the caller
/// sends; an administrator names an app only with the passcode (checked and counted by the
/// lifecycle machine, audited). Every call checks the lifecycle state and the app's
/// `storage.dataAccess` first; SQLite and AES-GCM run on the store pool.
final class StorageComponent: InterfaceComponent {
    unowned let host: any ComponentHost
    /// The storages opened since the key was installed, by app id; closed on lock or revocation.
    var open: [String: AppStorage] = [:]
    /// The sealed records of each open storage that its app's `Get`s read, answered on the loop
    /// (`StorageComponent+Get.swift`).
    var caches: [String: RecordCache] = [:]

    init(host: any ComponentHost) {
        self.host = host
    }

    var dataDirectory: String { host.configuration.paths.dataDirectory }

    func serve(_ method: Method.Storage, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        let record: StorageOperation.Record
        switch method {
        case .usage:
            let directory = dataDirectory
            let usage = host.storePool.runIfActive(eventLoop: host.loop) {
                AppStorage.usage(dataDirectory: directory).map {
                    StorageAppUsage(appId: $0.appId, records: $0.records, bytes: $0.bytes)
                }
            }
            return .deferred(usage.map { encoder.reply(StorageUsageReply(apps: $0)) })
        case .wipeApp:
            let parameters = try call.parameters(StorageWipeAppParameters.self)
            try Self.validate(parameters.appId)
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
                .deferred(wipe(parameters.appId, reason: "cordon wipe --app").map { encoder.empty() })
            }
        case .exportIdentity:
            let parameters = try call.parameters(StorageWipeAppParameters.self)
            try Self.validate(parameters.appId)
            return host.authorized(passcode: parameters.passcode, encoder: encoder) { [self] in
                exportIdentity(parameters.appId, encoder: encoder)
            }
        case .put: record = .put
        case .get: record = .get
        case .delete: record = .delete
        case .list: record = .list
        }
        let operation = try StorageOperation(record, call)
        if let appId = operation.appId {
            try Self.validate(appId)
            guard let passcode = operation.passcode else { throw CordonError.passcodeRequired.varlinkError }
            return host.authorized(passcode: passcode, encoder: encoder) { [self] in
                perform(operation, appId: appId, admin: true, encoder: encoder)
            }
        }
        // Only a verified managed registration reaches its app's records (docs/THREAT-MODEL.md).
        let registration = try typed { () throws(CordonError) in
            try host.verifiedRegistration(call.connection, for: .data)
        }
        if case .get(let name) = operation.kind {
            return get(name, namespace: operation.namespace, appId: registration.appId, encoder: encoder)
        }
        return perform(operation, appId: registration.appId, admin: false, encoder: encoder)
    }

    /// Runs `operation` on `appId`'s records on the store pool; an administrator's is audited.
    private func perform(_ operation: StorageOperation, appId: String, admin: Bool, encoder: ReplyEncoder)
        -> CallOutcome
    {
        let storage: AppStorage
        do {
            storage = try self.storage(for: appId)
        } catch {
            if admin { audit(appId, operation.action, outcome: "refused", reason: "\(error.varlinkName)") }
            return .reply(encoder.error(error.varlinkError))
        }
        let result = host.storePool.runIfActive(eventLoop: host.loop) { try operation.run(on: storage) }
        return .deferred(
            result.assumeIsolated().map { [self] reply in
                if admin { audit(appId, operation.action, outcome: "allow", reason: "an administrator's call") }
                return reply.encode(encoder)
            }.flatMapErrorThrowing { [self] error in
                let typed =
                    error as? CordonError
                    ?? (error as? StateAnchorError).map { .stateRolledBack(reason: "\($0)") }
                    ?? .internalError(reason: "storage: \(error)")
                if admin { audit(appId, operation.action, outcome: "refused", reason: "\(typed.varlinkName)") }
                return encoder.error(typed.varlinkError)
            }.nonisolated())
    }

    /// The open storage of `appId`, when the lifecycle and its `storage.dataAccess` allow it now.
    func storage(for appId: String) throws(CordonError) -> AppStorage {
        let state = host.lifecycleState
        let access = host.policy.policy.forApp(appId)[PolicyKeys.Storage.dataAccess].value
        guard state.keyAvailable, access != .whenUnlocked || state == .unlocked else {
            throw .containerLocked(appId: appId, state: state.rawValue)
        }
        if let storage = open[appId] { return storage }
        guard let key = host.appKey(for: appId) else { throw .containerLocked(appId: appId, state: state.rawValue) }
        defer { key.zero() }
        let storage = AppStorage(
            path: AppStorage.path(dataDirectory: dataDirectory, appId: appId), appId: appId, appKey: key)
        open[appId] = storage
        return storage
    }

    /// Closes what the key may no longer open: on a lock the storages of `whenUnlocked` apps,
    /// on revocation all of them; a full wipe deletes every app's file.
    func observe(_ event: CordonEvent) {
        switch event.payload {
        case .didLock:
            close { [host] appId in
                host.policy.policy.forApp(appId)[PolicyKeys.Storage.dataAccess].value == .whenUnlocked
            }
        case .encryptionKeyUnavailable:
            close { _ in true }
        case .wiped(appId: nil):
            close { _ in true }
            eraseEverything()
        case .appEnforced(let appId, _, let action):
            wipeOnEnforcement(appId, action)
        default:
            break
        }
    }

    func shutdown() { close { _ in true } }

    /// Forgets the storages `which` names and closes them on the pool, after any call in flight.
    func close(_ which: (String) -> Bool) {
        let closing = open.filter { which($0.key) }
        guard !closing.isEmpty else { return }
        var probes: [RecordCache.Probe] = []
        for appId in closing.keys {
            open[appId] = nil
            if let probe = caches.removeValue(forKey: appId)?.close() { probes.append(probe) }
        }
        let storages = Array(closing.values)
        let closed = probes
        let release: @Sendable () -> Void = {
            storages.forEach { $0.close() }
            closed.forEach { $0.close() }
        }
        host.storePool.runIfActive(eventLoop: host.loop, release).whenFailure { _ in release() }
    }

    /// Refuses an app id an administrator names that no app could have.
    static func validate(_ appId: String) throws(VarlinkError) {
        if let problem = AppIdentifier.problem(with: appId) {
            throw CordonError.invalidAppId(appId: appId, reason: problem).varlinkError
        }
    }

    /// Audits an administrator's call or a wipe.
    func audit(_ appId: String, _ action: String, outcome: String, reason: String) {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "storage", appId: appId, action: action, outcome: outcome, reason: reason)
        ])
    }
}
