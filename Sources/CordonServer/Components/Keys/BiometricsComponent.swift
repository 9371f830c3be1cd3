import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonSystem
import NIOCore
import NIOPosix

/// Fingerprint unlock through fprintd (`io.cordon.Agent.UnlockWithFingerprint`, `SetBiometrics`;
/// docs/ARCHITECTURE.md, "Keys"; docs/THREAT-MODEL.md, "Fingerprint unlock").
///
/// After a passcode unlock with `passcode.biometrics: allowed` and the user's opt-in, the master
/// key stays recoverable without the passcode: sealed (AES-256-GCM) under a random key in locked
/// memory, both zeroed when the re-authentication limit passes, `passcode.maxAttempts` is reached
/// (whatever `onMaxAttempts` does), the user logs out, the container is wiped, the user opts out
/// or the policy says `disabled`. A lock (with the key held or not) keeps it. A matching finger unseals it and the unlock goes
/// through the lifecycle machine like a passcode's: the attempt is counted first, a finger that
/// does not match is a failed attempt. fprintd is called on a thread of its own.
final class BiometricsComponent: AgentComponent {
    /// How long a scan may take.
    static let scanTimeoutSeconds = 30.0
    static let slot = ["cordon.biometrics.v1"]

    unowned let host: any KeyVault.Host
    /// The vault whose master key a passcode unlock arms this with.
    unowned let vault: KeyVault
    private(set) var gate = FingerprintGate()
    private(set) var optedIn: Bool
    /// The master key sealed under `wrapping`, while a fingerprint may unlock.
    private var sealedMaster: [UInt8]?
    private var wrapping: SecureBytes?
    private var expiry: Scheduled<Void>?
    /// Set by a correct passcode unlock, read at the `DidUnlock` that follows.
    var passcodeUnlocking = false
    private let pool: NIOThreadPool
    let reader: FingerprintReader

    init(host: any KeyVault.Host, vault: KeyVault) {
        self.host = host
        self.vault = vault
        optedIn = (try? host.database.loadBiometricsOptIn()) ?? false
        reader = FingerprintReader(address: host.configuration.lockTriggers?.system ?? "")
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    var policyAllows: Bool { host.policy.policy[PolicyKeys.Passcode.biometrics].value == .allowed }

    /// Serves `io.cordon.Agent.SetBiometrics`.
    func serveSetBiometrics(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(SetBiometricsParameters.self)
        return try setBiometrics(parameters, encoder: call.encoder)
    }

    /// Serves `io.cordon.Agent.UnlockWithFingerprint`.
    func serveUnlock(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        try unlock(encoder: call.encoder)
    }

    func shutdown() {
        disarm(why: "the agent stops")
        pool.shutdownGracefully { _ in }
    }

    func observe(_ event: CordonEvent) {
        switch event.kind {
        case .didUnlock:
            defer { passcodeUnlocking = false }
            guard passcodeUnlocking, let master = vault.masterKey else { return }
            arm(master, now: event.time)
        case .wiped:
            disarm(why: "the container was wiped")
        case .policyDidChange where !policyAllows:
            disarm(why: "passcode.biometrics is disabled")
        default:
            break
        }
    }

    // MARK: - Opt-in

    private func setBiometrics(_ parameters: SetBiometricsParameters, encoder: ReplyEncoder) throws(VarlinkError)
        -> CallOutcome
    {
        guard parameters.enabled else {
            disarm(why: "the user opted out")
            return store(false, encoder: encoder)
        }
        guard policyAllows else { throw CordonError.biometricsDisabled.varlinkError }
        guard let passcode = parameters.passcode else { throw CordonError.passcodeRequired.varlinkError }
        guard host.lifecycleState == .unlocked else { throw CordonError.locked.varlinkError }
        // Once the passcode is checked and the opt-in stored, fingerprints may unlock for 48 hours.
        return host.authorized(passcode: passcode, encoder: encoder) { [self] in store(true, encoder: encoder) }
    }

    private func store(_ enabled: Bool, encoder: ReplyEncoder) -> CallOutcome {
        let database = host.database
        let stored = host.storePool.runIfActive(eventLoop: host.loop) { try database.saveBiometricsOptIn(enabled) }
        return .deferred(
            stored.assumeIsolated().map { [self] () -> ByteBuffer in
                optedIn = enabled
                if !enabled {
                    disarm(why: "the user opted out")
                } else if let master = vault.masterKey, host.lifecycleState == .unlocked {
                    arm(master, now: host.clock())
                }
                host.logger.notice("fingerprint unlock \(enabled ? "turned on" : "turned off") by the user")
                return encoder.empty()
            }.nonisolated().recover { error in
                encoder.error(
                    CordonError.internalError(reason: "the opt-in could not be stored: \(error)").varlinkError)
            })
    }

    // MARK: - Keeping the key

    private func arm(_ master: SecureBytes, now: Double) {
        guard policyAllows, optedIn else { return }
        let key = vault.custody.makeMasterKey()
        guard
            let sealed = try? master.withUnsafeBytes({ bytes in try RecordSealer(key: key).seal(bytes, slot: Self.slot)
            })
        else {
            key.zero()
            return
        }
        wrapping?.zero()
        wrapping = key
        sealedMaster = sealed
        gate.passcodeUnlocked(now: now)
        expiry?.cancel()
        if let deadline = gate.deadline {
            let delay = max(0, deadline - host.clock())
            expiry = host.loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(delay * 1e9) + 1_000_000)) {
                [self] in
                expiry = nil
                if gate.expired(now: host.clock()) {
                    disarm(why: "the re-authentication limit passed", reason: .reauthLimit)
                }
            }
        }
    }

    /// Zeroes the kept key: only the passcode unlocks from now on. `reason` is the refusal a
    /// fingerprint unlock gets until then (nil: no passcode unlock since …).
    func disarm(why: String, reason: FingerprintGate.Refusal? = nil) {
        expiry?.cancel()
        expiry = nil
        guard wrapping != nil || gate.lastPasscodeUnlockAt != nil else { return }
        wrapping?.zero()
        wrapping = nil
        sealedMaster = nil
        gate.disarm(reason: reason)
        host.logger.info("fingerprint unlock disarmed: the kept key is zeroed (\(why))")
    }

    /// Whether a sealed copy of the master key is kept for fingerprint unlock.
    var isArmed: Bool { sealedMaster != nil }

    /// The master key unsealed for a matching finger, or nil when disarmed meanwhile.
    func unsealMaster() -> SecureBytes? {
        guard let wrapping, let sealedMaster else { return nil }
        return try? RecordSealer(key: wrapping).open(sealedMaster, slot: Self.slot)
    }

    // MARK: - Unlocking

    private func unlock(encoder: ReplyEncoder) throws(VarlinkError) -> CallOutcome {
        let machine = host.lifecycle
        if machine.state == .uninitialized { throw CordonError.notInitialized.varlinkError }
        if machine.state == .unlocked { return .reply(encoder.empty()) }
        let now = host.clock()
        // The reason is asked of the gate before and after the kept key is zeroed alike: it
        // remembers that the limit passed.
        if gate.expired(now: now) { disarm(why: "the re-authentication limit passed", reason: .reauthLimit) }
        switch gate.refusal(policyAllows: policyAllows, optedIn: optedIn, now: now) {
        case .disabledByPolicy: throw CordonError.biometricsDisabled.varlinkError
        case .notOptedIn: throw CordonError.biometricsNotEnabled.varlinkError
        case .passcodeFirst:
            throw CordonError.biometricsPasscodeNeeded(
                reason:
                    "no passcode unlock since the agent started, since fingerprint unlock was turned on, "
                    + "or since passcode.maxAttempts was reached"
            ).varlinkError
        case .reauthLimit:
            throw CordonError.biometricsPasscodeNeeded(
                reason: "more than 48 hours since the last passcode unlock"
            ).varlinkError
        case .loggedOut:
            throw CordonError.biometricsPasscodeNeeded(
                reason: "logged out since the last passcode unlock"
            ).varlinkError
        case nil: break
        }
        if machine.pending != nil { throw CordonError.busy.varlinkError }
        let wait = machine.retryAfter(now: now)
        if wait > 0 { throw CordonError.retryLater(retryAfterSeconds: wait).varlinkError }
        let reader = self.reader
        // Whether a finger is enrolled is asked first: a missing reader costs no attempt.
        let probe = pool.runIfActive(eventLoop: host.loop) { () throws -> String in try reader.enrolledDevice() }
        let promise = host.loop.makePromise(of: ByteBuffer.self)
        probe.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let device):
                var context = LifecycleRequest(promise: promise, encoder: encoder)
                context.fingerprintDevice = device
                host.run(.unlockRequested(hasPasscode: true, now: host.clock()), request: context)
            case .failure(let error):
                if case FingerprintReader.Failure.notTheSystemsFprintd = error {
                    host.logger.warning("fingerprint unlock refused: \(error)")
                }
                promise.succeed(encoder.error(CordonError.biometricsUnavailable(reason: "\(error)").varlinkError))
            }
        }
        return .deferred(promise.futureResult)
    }

    /// Scans once, after the attempt counter is stored (`KeyVault+Fingerprint.swift`).
    func scan(device: String) -> EventLoopFuture<(FingerprintReader.Outcome, ignored: Int)> {
        let reader = self.reader
        return pool.runIfActive(eventLoop: host.loop) {
            try reader.verify(device: device, timeoutSeconds: Self.scanTimeoutSeconds)
        }
    }

    /// A matching finger unlocked.
    func fingerprintUnlocked() { gate.fingerprintUnlocked() }
}
