import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import Logging
import NIOCore

/// Key custody (docs/ARCHITECTURE.md, "Keys"): the wrapped master key and what protects it, the
/// master key while it is held, each app's random key (wrapped, and unwrapped while the master
/// key is held; `KeyVault+AppKeys.swift`), and every check that opens or re-seals the key —
/// passcode, recovery key, fingerprint (`KeyVault+Passcode.swift`, `KeyVault+Recovery.swift`,
/// `KeyVault+Fingerprint.swift`).
///
/// The lifecycle machine decides; the vault performs its key actions (`perform(_:)`) and answers
/// the request a check was for. It serves `Initialize`, `Unlock`, `ChangePasscode`, `Wipe` and
/// `Recover` (`KeyVault+Methods.swift`), and gives other components app keys and keys derived
/// from the master key (``KeySource``) — never the master key itself.
final class KeyVault: AgentComponent, KeySource {
    /// What the vault needs of the agent.
    typealias Host = LifecycleDriver & PolicyProvider & RegistrationVerifier & AuditSink

    unowned let host: any Host
    let custody = KeyCustody()
    /// The master key while the container holds it.
    private(set) var masterKey: SecureBytes?
    /// A master key just unwrapped by a check, installed only if the machine says so.
    var candidateKey: SecureBytes?
    /// The stored, wrapped master key; nil before `Initialize` and after a wipe.
    var wrappedKey: WrappedKey?
    /// What protects the stored key and the TPM's lockout state, as last read.
    var keyProtection: KeyProtectionStatus?
    /// Each app's wrapped random key (the `appKey` table), loaded at start.
    var wrappedAppKeys: [String: [UInt8]]
    /// The app keys unwrapped while the master key is held, in locked memory; zeroed with it.
    var appKeys: [String: SecureBytes] = [:]
    /// Apps whose key a selective wipe is destroying: none is handed out meanwhile.
    var appKeysBeingDestroyed: Set<String> = []
    /// A passcode check or key creation in flight.
    var pending: PendingRequest?
    /// Reads the TPM's state for `GetStatus` (made at the first read).
    var protectionReader: ProtectionReader?
    /// Fingerprint unlock, which keeps a sealed copy of the master key while armed.
    private(set) lazy var biometrics = BiometricsComponent(host: host, vault: self)

    /// A passcode check or key creation in flight.
    struct PendingRequest {
        let promise: EventLoopPromise<ByteBuffer>
        let passcode: String
        let newPasscode: String?
        let encoder: ReplyEncoder
        /// A recovery key to restore with instead of checking `passcode` (`KeyVault+Recovery.swift`).
        var recoveryKey: RecoveryKey? = nil
        /// The reply for success, when it is not empty (the recovery key of `Initialize`, `Recover`).
        var successReply: ByteBuffer? = nil
    }

    /// Loads the wrapped key and the wrapped app keys from the store, and checks the state against
    /// its TPM anchor before anything reads it (the policy loader's serials, the attempts).
    init(host: any Host) throws {
        self.host = host
        wrappedKey = try host.database.loadWrappedKey()
        wrappedAppKeys = try host.database.wrappedAppKeys()
        checkStateAnchor()
    }

    var anchorKeeper: StateAnchorKeeper { StateAnchorKeeper(tcti: host.configuration.tpmTCTI) }

    /// Checks the stored state against the TPM anchor it names (`StateAnchorKeeper.attach`); a
    /// refusal is logged and audited, and every check answers `StateRolledBack` until it holds.
    /// Runs where it is called: at start, before anything reads the state, and before a check
    /// when the TPM could not be reached earlier.
    func checkStateAnchor() {
        let database = host.database
        switch anchorKeeper.attach(to: database, keystoreIndex: wrappedKey?.anchorIndex) {
        case .success:
            break
        case .failure(let error) where wrappedKey == nil:
            // No container to protect: a new one makes a new anchor.
            logger.warning("the state anchor of an erased container is dropped: \(error)")
            try? database.forgetAnchor()
        case .failure(let error):
            stateRefused(error)
        }
        // An edit found by a later write, while the agent runs: logged and audited the same way.
        let loop = host.loop
        let vault = NIOLoopBound(WeakVault(self), eventLoop: loop)
        database.onStateRefused { error in
            loop.execute { vault.value.vault?.stateRefused(error, whileRunning: true) }
        }
    }

    /// Logs and audits the state refused as rolled back or edited; found while the agent runs, the
    /// key is revoked too (apps are told `EncryptionKeyUnavailable`, reason `policy`): nothing of the
    /// container stays open on a state that no longer holds, and no unlock opens it again.
    private func stateRefused(_ error: StateAnchorError, whileRunning: Bool = false) {
        logger.critical("the security state is refused: \(error)", metadata: ["event": "state.anchor"])
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .decision, appId: nil, action: "state.anchor", outcome: "refused",
                reason: error.description, rules: [])
        ])
        if whileRunning && masterKey != nil { host.run(.revoke(reason: .policy, now: host.clock())) }

    }

    var isInitialized: Bool { wrappedKey != nil }

    /// What `status` shows of the key's protection: the TPM's state as last read, the state
    /// anchor, and a refused state as the problem it is.
    var protectionStatus: KeyProtectionStatus? {
        guard var status = keyProtection ?? wrappedKey.map({ KeyProtectionStatus(kind: $0.protection.rawValue) })
        else { return nil }
        switch host.database.anchorProblem {
        case .lost(let reason)?:
            // The TPM's own problem (cleared, replaced) names the way out already.
            status.problem = status.problem ?? StateAnchorError.lost(reason).description
        case let problem?:
            status.problem =
                "the security state is refused (StateRolledBack): \(problem); only `cordon wipe --yes` starts again"
        case nil:
            status.stateAnchor = host.database.attachedAnchor.map {
                "TPM NV counter " + String(format: "0x%08x", $0.reference.index)
            }
        }
        return status
    }

    var logger: Logger { host.logger }

    // MARK: - The machine's key actions

    /// Performs one of the lifecycle machine's key actions; a check that follows a counter write
    /// is chained behind it (`startCheck`), never run if the write failed.
    func perform(_ action: KeyAction, request: LifecycleRequest?) {
        switch action {
        case .persistAttempts(let count, let lastFailureAt, then: let work?):
            startCheck(work, count: count, lastFailureAt: lastFailureAt, request: request)
        case .persistAttempts(let count, let lastFailureAt, then: nil):
            persistAttempts(count: count, lastFailureAt: lastFailureAt)
        case .create:
            startCreate(request: request)
        case .install:
            zeroAppKeys()
            masterKey?.zero()
            masterKey = candidateKey
            candidateKey = nil
        case .discard:
            discard()
        case .erase:
            eraseKeystore()
        case .maxAttemptsReached:
            // Only the passcode unlocks from now on: a finger does not outlive the max-attempts action.
            biometrics.disarm(why: "passcode.maxAttempts was reached")
        }
    }

    /// A key action of the lifecycle machine (`LifecycleAction`), as the vault performs it.
    enum KeyAction {
        /// Store the attempt counter, then run `then` (a passcode check or re-wrap) if it was stored.
        case persistAttempts(count: Int, lastFailureAt: Double?, then: LifecycleAction?)
        case create
        case install
        case discard
        case erase
        /// `passcode.maxAttempts` was reached: the key kept for fingerprint unlock is zeroed.
        case maxAttemptsReached
    }

    /// After a machine step: a candidate the machine did not install is zeroed at once.
    func dropCandidate() {
        candidateKey?.zero()
        candidateKey = nil
    }

    /// Answers `request` (a synchronous call) or the pending request with `result`.
    func complete(_ request: LifecycleRequest?, with result: Result<Void, CordonError>) {
        let target: (EventLoopPromise<ByteBuffer>, ReplyEncoder)?
        let successReply = pending?.successReply
        if let request {
            target = (request.promise, request.encoder)
        } else if let pending {
            target = (pending.promise, pending.encoder)
            self.pending = nil
        } else {
            target = nil
        }
        guard let (promise, encoder) = target else { return }
        switch result {
        case .success where request == nil && successReply != nil: promise.succeed(successReply ?? encoder.empty())
        case .success: promise.succeed(encoder.empty())
        case .failure(let error): promise.succeed(encoder.error(error.varlinkError))
        }
    }

    /// Zeroes the master key and the app keys (a lock that discards it, revocation, shutdown).
    func discard() {
        zeroAppKeys()
        masterKey?.zero()
        masterKey = nil
        if biometrics.isArmed {
            logger.info(
                "key discarded: the master key and every app key are zeroed; a sealed copy stays for fingerprint unlock until a logout, 48 hours after the last passcode unlock or passcode.maxAttempts"
            )
        } else {
            logger.info("key discarded: every key copy in the agent is zeroed")
        }
    }

    func shutdown() {
        protectionReader?.shutdown()
        zeroAppKeys()
        masterKey?.zero()
        masterKey = nil
    }

    private func persistAttempts(count: Int, lastFailureAt: Double?) {
        let database = host.database
        host.storePool.runIfActive(eventLoop: host.loop) {
            try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
        }.whenFailure { [logger] error in
            logger.error("could not store the failed-attempt counter: \(error)")
        }
    }

    private func eraseKeystore() {
        wrappedKey = nil
        zeroAppKeys()
        wrappedAppKeys = [:]
        let database = host.database
        host.storePool.runIfActive(eventLoop: host.loop) {
            try database.eraseKeystore()
        }.whenComplete { [logger] result in
            switch result {
            case .success: logger.warning("keystore erased: the master key is gone (crypto-erase)")
            case .failure(let error): logger.error("could not erase the keystore: \(error)")
            }
        }
    }

    // MARK: - Derived keys (KeySource; app keys in `KeyVault+AppKeys.swift`)

    /// The key for `purpose` now, or nil when the master key is not held. The caller zeroes it.
    func purposeKey(_ purpose: [String]) -> SecureBytes? {
        guard let master = masterKey else { return nil }
        return custody.purposeKey(master: master, purpose: purpose)
    }
}

/// The vault, not kept alive by the database's callback (`checkStateAnchor`).
private final class WeakVault {
    weak var vault: KeyVault?
    init(_ vault: KeyVault) { self.vault = vault }
}
