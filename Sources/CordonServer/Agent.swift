import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The agent: runs the lifecycle machine and performs its actions.
///
/// Every mutable field is confined to `loop`, the single event loop that also serves every
/// connection, so a fan-out is a loop over channels with no locks or hops. Slow work
/// (scrypt, SQLite writes) runs on a one-thread pool, which also keeps it in order.
///
/// The confinement is the compiler's to check: `Agent` is not `Sendable`, so no closure that
/// may run on another thread (the store pool's work, a watcher's callback) can capture it.
/// Code on the loop continues through `loop.assumeIsolated()` and `future.assumeIsolated()`;
/// other threads reach it only through a `NIOLoopBound` (``onLoop``), which checks the loop.
final class Agent {
    let loop: any EventLoop
    let configuration: AgentConfiguration
    let database: CordonDatabase
    let logger: Logger
    let clock: @Sendable () -> Double
    let custody = KeyCustody()
    /// Serial: store writes and key derivations run one at a time, in submission order.
    let storePool: NIOThreadPool

    var machine: LifecycleMachine
    var registry = AppRegistry()
    /// The process behind each registration, as it was when it registered (`Agent+Identity.swift`).
    var processes: [ConnectionID: AppProcess] = [:]
    var masterKey: SecureBytes?
    /// Each app's key generation (selective wipe; `StorageComponent`), loaded at start.
    var appGenerations: [String: Int] = [:]
    /// A master key just unwrapped by a check, installed only if the machine says so.
    var candidateKey: SecureBytes?
    var wrappedKey: WrappedKey?
    /// What protects the stored key and the TPM's lockout state, as last read (`Agent+Passcode.swift`).
    var keyProtection: KeyProtectionStatus?
    var pending: PendingRequest?
    var connections: [ConnectionID: AgentConnection] = [:]
    var nextConnectionID: ConnectionID = 1
    var timer: Scheduled<Void>?
    var isShuttingDown = false
    /// Called on the loop after every machine step (the service manager's `STATUS=` updates).
    var stateObserver: (() -> Void)?

    /// The D-Bus lock triggers (see Agent+LockTriggers.swift), and those in force.
    var lockTriggers: BusLockTriggers?
    var activeLockTriggers: [String] = []

    /// The audit writer, which every part of the agent writes through.
    lazy var auditLog = AuditLogComponent(host: self)
    /// The subscribers and the fan-out.
    lazy var eventBus = EventBusComponent(host: self)
    /// The policy files, their watcher and the policy in force.
    lazy var policyHost = PolicyHostComponent(host: self)
    /// The policy in force.
    var policy: PolicyEvaluator { policyHost.evaluator }
    /// What happens to apps that miss their acknowledgement deadline.
    lazy var enforcement = EnforcementComponent(host: self)
    /// The components the agent hosts (`Agent+Components.swift`) and the method each serves.
    lazy var components: [any AgentComponent] = makeComponents()
    lazy var routes: [Method: any AgentComponent] = Self.routes(of: components)
    /// The device's posture and the conditions on it (`PostureComponent`).
    lazy var posture = PostureComponent(host: self)
    /// App storage and selective wipe (`StorageComponent`).
    lazy var storage = StorageComponent(host: self)
    /// Fingerprint unlock through fprintd (`BiometricsComponent`).
    lazy var biometrics = BiometricsComponent(agent: self)

    /// A passcode check or key creation in flight.
    struct PendingRequest {
        let promise: EventLoopPromise<ByteBuffer>
        let passcode: String
        let newPasscode: String?
        let encoder: ReplyEncoder
        /// A recovery key to restore with instead of checking `passcode` (`Agent+Recovery.swift`).
        var recoveryKey: RecoveryKey? = nil
        /// The reply for success, when it is not empty (the recovery key of `Initialize`, `Recover`).
        var successReply: ByteBuffer? = nil
    }

    init(
        loop: any EventLoop, configuration: AgentConfiguration, database: CordonDatabase, storePool: NIOThreadPool,
        logger: Logger, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) throws {
        self.loop = loop
        self.configuration = configuration
        self.database = database
        self.storePool = storePool
        self.logger = logger
        self.clock = clock
        machine = LifecycleMachine(configuration: configuration.lifecycle)
        wrappedKey = try database.loadWrappedKey()
        let attempts = try database.loadAttempts()
        appGenerations = try database.appGenerations()
        _ = machine.handle(
            .start(
                initialized: wrappedKey != nil, failedAttempts: attempts.count, lastFailureAt: attempts.lastFailureAt,
                now: clock()))
        policyHost.loadInitial()
        if wrappedKey != nil { refreshKeyProtection() }
        if configuration.insecureFastKDF {
            logger.critical(
                "INSECURE: the fast test KDF is enabled (--insecure-fast-kdf); passcodes are trivial to brute-force. Never use this outside tests."
            )
        }
    }

    // MARK: - Running the machine

    /// Feeds `input` to the machine and performs the resulting actions.
    /// `request` answers `.succeed` / `.fail` for a synchronous call.
    func run(_ input: LifecycleInput, request: RequestContext? = nil) {
        loop.preconditionInEventLoop()
        let actions = machine.handle(input)
        var index = 0
        while index < actions.count {
            let action = actions[index]
            index += 1
            switch action {
            case .emit(let event):
                broadcast(event)
            case .persistFailedAttempts(let count, let lastFailure):
                // A check that follows is chained behind the write and never runs if it failed.
                if index < actions.count, actions[index] == .checkPasscode || actions[index] == .rewrapMasterKey {
                    let work = actions[index]
                    index += 1
                    startCheck(work, count: count, lastFailureAt: lastFailure, request: request)
                } else {
                    persistAttempts(count: count, lastFailureAt: lastFailure)
                }
            case .createMasterKey:
                startCreate(request: request)
            case .checkPasscode, .rewrapMasterKey:
                // Always preceded by the counter write; handled above.
                logger.error("passcode check requested without a stored attempt counter; refused")
                complete(request, with: .failure(.internalError(reason: "attempt counter not stored")))
            case .installKey:
                masterKey?.zero()
                masterKey = candidateKey
                candidateKey = nil
            case .discardKey:
                discardKeys()
            case .eraseKeystore:
                eraseKeystore()
            case .succeed:
                complete(request, with: .success(()))
            case .fail(let error):
                complete(request, with: .failure(error))
            }
        }
        // A candidate the machine did not install is zeroed at once.
        candidateKey?.zero()
        candidateKey = nil
        rescheduleTimer()
        stateObserver?()
    }

    /// Who answers a request: a synchronous call's promise, or the pending one.
    struct RequestContext {
        let promise: EventLoopPromise<ByteBuffer>
        let encoder: ReplyEncoder
        var passcode: String?
        var newPasscode: String?
        var recoveryKey: RecoveryKey?
        /// A fingerprint unlock: fprintd's reader to scan on instead of checking a passcode.
        var fingerprintDevice: String? = nil
    }

    private func complete(_ request: RequestContext?, with result: Result<Void, CordonError>) {
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

    // MARK: - Keys and store

    private func discardKeys() {
        masterKey?.zero()
        masterKey = nil
        logger.info("key discarded: every key copy in the agent is zeroed")
    }

    private func persistAttempts(count: Int, lastFailureAt: Double?) {
        let database = self.database
        storePool.runIfActive(eventLoop: loop) {
            try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
        }.whenFailure { [logger] error in
            logger.error("could not store the failed-attempt counter: \(error)")
        }
    }

    private func eraseKeystore() {
        wrappedKey = nil
        let database = self.database
        storePool.runIfActive(eventLoop: loop) {
            try database.eraseKeystore()
        }.whenComplete { [logger] result in
            switch result {
            case .success: logger.warning("keystore erased: the master key is gone (crypto-erase)")
            case .failure(let error): logger.error("could not erase the keystore: \(error)")
            }
        }
    }

    /// A handle other threads can hold: its `value` is the agent, only on `loop`. Made on the loop.
    var onLoop: NIOLoopBound<Agent> { NIOLoopBound(self, eventLoop: loop) }

    // MARK: - Timers

    func rescheduleTimer() {
        timer?.cancel()
        timer = nil
        let deadlines = [machine.nextDeadline, registry.nextDeadline].compactMap { $0 }
        guard let next = deadlines.min(), !isShuttingDown else { return }
        let delay = max(0, next - clock())
        timer = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay * 1e9) + 1_000_000)) { [self] in
            timer = nil
            let now = clock()
            for app in registry.tick(now: now) {
                enforcement.enforce(app, why: "no acknowledgement by the deadline")
            }
            run(.tick(now: now))
        }
    }
}
