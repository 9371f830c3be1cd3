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
    /// Serial: store writes and key derivations run one at a time, in submission order.
    let storePool: NIOThreadPool

    var machine: LifecycleMachine
    var connections: [ConnectionID: AgentConnection] = [:]
    var nextConnectionID: ConnectionID = 1
    var timer: Scheduled<Void>?
    var isShuttingDown = false
    /// Called on the loop after every machine step (the service manager's `STATUS=` updates).
    var stateObserver: (() -> Void)?

    /// The components (`Agent+Components.swift`), each owning its state; the agent routes calls
    /// to them (`Agent+Routing.swift`) and provides their capabilities (`ComponentHost`).
    /// Key custody: the master key, its wrapping, passcode, recovery and fingerprint checks.
    private(set) var vault: KeyVault!
    /// The registered apps and the processes behind them.
    private(set) lazy var apps = AppRegistrations(host: self)
    /// Policy decisions, audited.
    private(set) lazy var decisions = DecisionsComponent(host: self)
    /// The audit writer, which every part of the agent writes through.
    private(set) lazy var auditLog = AuditLogComponent(host: self)
    /// The subscribers and the fan-out.
    private(set) lazy var eventBus = EventBusComponent(host: self)
    /// The policy files, their watcher and the policy in force.
    private(set) lazy var policyHost = PolicyHostComponent(host: self)
    /// What happens to apps that miss their acknowledgement deadline.
    private(set) lazy var enforcement = EnforcementComponent(host: self)
    /// The device's posture and the conditions on it.
    private(set) lazy var posture = PostureComponent(host: self)
    /// The D-Bus lock triggers and those in force.
    private(set) lazy var lockTriggers = LockTriggersComponent(host: self)
    /// App storage and selective wipe.
    private(set) lazy var storage = StorageComponent(host: self)
    private(set) lazy var pasteboard = PasteboardComponent(host: self)
    private(set) lazy var documents = DocumentsComponent(host: self)
    private(set) lazy var unlockPrompt = UnlockPromptComponent(host: self)
    private(set) lazy var tokens = TokensComponent(host: self)
    private(set) lazy var identity = IdentityComponent(host: self)
    /// cordon-fleetd's commands and `conditions.policyStale`.
    private(set) lazy var fleet = FleetComponent(host: self)
    /// Every component, in the order they observe events.
    private(set) lazy var components: [any AgentComponent] = [
        auditLog, policyHost, eventBus, pasteboard, documents, unlockPrompt, posture, storage, tokens, identity,
        enforcement, vault.biometrics, decisions, apps, vault, fleet,
    ]

    /// The policy in force.
    var policy: PolicyEvaluator { policyHost.evaluator }

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
        machine = LifecycleMachine(configuration: configuration.initialLifecycle)
        let attempts = try database.loadAttempts()
        vault = try KeyVault(host: self)
        _ = machine.handle(
            .start(
                initialized: vault.isInitialized, failedAttempts: attempts.count,
                lastFailureAt: attempts.lastFailureAt, now: clock()))
        policyHost.loadInitial()
        // Made now: it remembers whether a container exists, so the one made later records its floor.
        _ = fleet
        if vault.isInitialized { vault.refreshKeyProtection() }
        if configuration.insecureFastKDF {
            logger.critical(
                "INSECURE: the fast test KDF is enabled (--insecure-fast-kdf); passcodes are trivial to brute-force. Never use this outside tests."
            )
        }
    }

    // MARK: - Running the machine

    /// Feeds `input` to the machine and performs the resulting actions: events go to the
    /// components and subscribers, key actions to the vault, answers to the request.
    /// `request` answers `.succeed` / `.fail` for a synchronous call.
    func run(_ input: LifecycleInput, request: LifecycleRequest? = nil) {
        loop.preconditionInEventLoop()
        if case .revoke(.logout, _) = input {
            // A logout zeroes every copy of the key, the one kept for fingerprint unlock too (before
            // the key itself): the next unlock needs the passcode (docs/THREAT-MODEL.md,
            // "Fingerprint unlock"). A lock keeps it.
            vault.biometrics.disarm(why: "the user logged out", reason: .loggedOut)
        }
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
                var then: LifecycleAction?
                if index < actions.count, actions[index] == .checkPasscode || actions[index] == .rewrapMasterKey {
                    then = actions[index]
                    index += 1
                }
                vault.perform(.persistAttempts(count: count, lastFailureAt: lastFailure, then: then), request: request)
            case .createMasterKey:
                vault.perform(.create, request: request)
            case .checkPasscode, .rewrapMasterKey:
                // Always preceded by the counter write; handled above.
                logger.error("passcode check requested without a stored attempt counter; refused")
                vault.complete(request, with: .failure(.internalError(reason: "attempt counter not stored")))
            case .installKey:
                vault.perform(.install, request: request)
            case .discardKey:
                vault.perform(.discard, request: request)
            case .maxAttemptsReached:
                vault.perform(.maxAttemptsReached, request: request)
            case .eraseKeystore:
                vault.perform(.erase, request: request)
            case .succeed:
                vault.complete(request, with: .success(()))
            case .fail(let error):
                vault.complete(request, with: .failure(error))
            }
        }
        vault.dropCandidate()
        fleet.lifecycleStepped()
        rescheduleTimer()
        stateObserver?()
    }

    /// A handle other threads can hold: its `value` is the agent, only on `loop`. Made on the loop.
    var onLoop: NIOLoopBound<Agent> { NIOLoopBound(self, eventLoop: loop) }

    // MARK: - Timers

    func rescheduleTimer() {
        timer?.cancel()
        timer = nil
        let deadlines = [machine.nextDeadline, apps.registry.nextDeadline].compactMap { $0 }
        guard let next = deadlines.min(), !isShuttingDown else { return }
        let delay = max(0, next - clock())
        timer = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay * 1e9) + 1_000_000)) { [self] in
            timer = nil
            let now = clock()
            for app in apps.registry.tick(now: now) {
                enforcement.enforce(app, why: "no acknowledgement by the deadline")
            }
            run(.tick(now: now))
        }
    }
}
