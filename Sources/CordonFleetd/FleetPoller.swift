import CordonFleet
import CordonPosture
import CordonProtocol
import Crypto
import Foundation
import Logging

/// One machine's view of its repository (docs/ARCHITECTURE.md, "Fleet"): each poll verifies what
/// changed (`TUFRefresh`), installs the policies, hands verified commands to the agents, writes the
/// status the agents judge freshness by, persists the new trusted state (only after all of that),
/// and sends the machine's signed report when it changed.
public actor FleetPoller {
    /// How a poll ended.
    public enum Result: Sendable, Equatable {
        /// Verified (new metadata or none); `refreshNow` when a `refresh` command asked for another poll.
        case verified(changed: Bool, refreshNow: Bool)
        /// Refused or unreachable: the last good state stands.
        case failed(String)
    }

    let configuration: FleetdConfiguration
    let paths: FleetdPaths
    let client: RepositoryClient
    let key: FleetDeviceKey
    let audit: FleetdAudit
    let shippedRoot: [UInt8]
    let logger: Logger
    /// Counts what each poll decides (docs/FLEET.md, "Metrics").
    public nonisolated let metrics: FleetdMetrics
    private(set) var state: FleetdState
    /// The push channel's doorbell: what rang and when the poll it asked for is due.
    private var doorbell = FleetDoorbell()
    /// When each kind of refused ring or pushed file was last audited, by event and kind (a flood
    /// is audited once a minute per kind).
    private var floodAudited: [String: Date] = [:]
    /// Where a new signed report goes besides `reportURL` (the push channel's report subject).
    private var reportSink: (@Sendable ([UInt8]) -> Bool)?
    /// The digest of the last report `reportSink` took (one it refused goes again at the next poll).
    private var sunk: String?
    /// The trusted metadata as last loaded: rings and pushed files are judged against it without
    /// parsing every file again (a flood of rings costs a signature check each, not a reload).
    private var trustedCache: TUFTrustedSet?
    /// Rings and pushed files refused since start, by event and kind, for the audit record.
    private var floodCount: [String: Int] = [:]
    /// How the current poll is failing, for `cordon_fleetd_polls_total` (a refusal or an
    /// unreachable repository found deep in a step; anything else is a local error).
    private var failure = FleetdMetrics.PollResult.error

    public init(
        configuration: FleetdConfiguration, paths: FleetdPaths, key: FleetDeviceKey, logger: Logger,
        metrics: FleetdMetrics = FleetdMetrics()
    ) throws(FleetdError) {
        guard let root = FileManager.default.contents(atPath: configuration.trustedRoot) else {
            throw FleetdError(
                "cannot read the trusted root \(configuration.trustedRoot)",
                hint: "install the root.json your admins ship there")
        }
        do {
            _ = try TUFTrustedSet(root: Array(root))
        } catch {
            throw FleetdError(
                "\(configuration.trustedRoot): \(error)", hint: "the shipped root must be signed by its own root keys")
        }
        self.configuration = configuration
        self.paths = paths
        self.key = key
        self.logger = logger
        self.shippedRoot = Array(root)
        self.client = RepositoryClient(base: configuration.repository, caFile: configuration.caFile)
        self.audit = FleetdAudit(stateDirectory: paths.stateDirectory, logger: logger)
        self.state = try FleetdState.load(from: paths.stateDirectory)
        self.metrics = metrics
        metrics.verified(at: state.verifiedAt)
    }

    /// Sends every new signed report to `sink` too (from the push channel).
    public func setReportSink(_ sink: @escaping @Sendable ([UInt8]) -> Bool) { reportSink = sink }

    /// The trusted set, loaded once per change of the persisted metadata.
    private func trusted() throws(TUFError) -> TUFTrustedSet {
        if let trustedCache { return trustedCache }
        let set = try state.trustedSet(shippedRoot: shippedRoot)
        trustedCache = set
        return set
    }

    /// Closes the HTTP client.
    public func shutdown() async { await client.shutdown() }

    /// One poll at `now`, counted and timed in `metrics`.
    public func poll(now: Date = Date()) async -> Result {
        doorbell.polled()
        let clock = ContinuousClock()
        let start = clock.now
        failure = .error
        let result = await verify(now: now)
        let counted: FleetdMetrics.PollResult
        switch result {
        case .verified(let changed, _): counted = changed ? .updated : .unchanged
        case .failed: counted = failure
        }
        metrics.poll(counted, duration: clock.now - start)
        return result
    }

    private func verify(now: Date) async -> Result {
        let trusted: TUFTrustedSet
        do {
            trusted = try self.trusted()
        } catch {
            return fail("the trusted root does not verify: \(error)", now: now)
        }
        let outcome = await refresh(trusted, now: now)
        let set: TUFTrustedSet
        let metadataChanged: Bool
        switch outcome.result {
        case .refused(let error):
            if error.kind != .transport {
                _ = refusal(error)
            } else {
                failure = .unreachable
            }
            return fail("\(error)", now: now)
        case .updated(let new):
            set = new
            metadataChanged = true
        case .unchanged(let new):
            set = new
            metadataChanged = false
        }
        do {
            try await installPolicies(set)
            let refreshNow = try await takeCommands(set, now: now)
            state.files = set.files.mapValues { Data($0) }
            trustedCache = set
            state.verifiedAt = set.verifiedAt
            metrics.verified(at: set.verifiedAt)
            state.etag = outcome.etag ?? state.etag
            state.lastError = nil
            try writeStatus(set)
            FleetdCrashPoint.reached(.beforeSave)
            try state.save(to: paths.stateDirectory)
            if metadataChanged {
                logger.info("repository verified", metadata: ["versions": "\(set.versions.sorted { $0.key < $1.key })"])
            }
            await report(set, now: now)
            return .verified(changed: metadataChanged, refreshNow: refreshNow)
        } catch {
            return fail(error.message, now: now)
        }
    }

    // MARK: Doorbell

    /// Judges a ring of the push channel's doorbell at `now` (`unit`: uniform in 0..<1 for the
    /// delay); a refused one is counted, and audited at most once a minute per kind of refusal.
    public func ring(_ bytes: [UInt8], now: Date = Date(), unit: Double) -> FleetDoorbell.Decision {
        let decision: FleetDoorbell.Decision
        do {
            decision = doorbell.ring(
                bytes, trusted: try trusted(), now: now, unit: unit)
        } catch {
            decision = .refused(error)
        }
        metrics.ring(decision)
        switch decision {
        case .refused(let error):
            let kind = error.kind.rawValue
            auditOnceAMinute("doorbell.refused", limitedBy: kind, ["kind": kind, "detail": error.detail], now: now)
        case .poll(let at):
            logger.info("push: the doorbell rang; polling", metadata: ["in": "\(Int(at.timeIntervalSince(now)))s"])
        case .alreadyScheduled, .notNewer:
            break
        }
        return decision
    }

    /// Audits `event` with `fields` unless one of the same `limit` was audited in the last minute;
    /// the record says how many there were since start (`refusedSinceStart`), so a flood costs one
    /// record a minute.
    private func auditOnceAMinute(_ event: String, limitedBy limit: String, _ fields: [String: String], now: Date) {
        let key = event + "/" + limit
        floodCount[key, default: 0] += 1
        guard floodAudited[key].map({ now.timeIntervalSince($0) >= 60 }) ?? true else { return }
        floodAudited[key] = now
        audit.record(event, fields.merging(["refusedSinceStart": "\(floodCount[key] ?? 0)"]) { $1 })
    }

    // MARK: Metadata

    private func refresh(_ trusted: TUFTrustedSet, now: Date) async -> (result: TUFRefresh.Outcome, etag: String?) {
        await RepositoryPoll(client: client).refresh(trusted, etag: state.etag, now: now)
    }

    /// Downloads and verifies one target.
    private func download(_ file: TUFTargetFile) async throws(FleetdError) -> [UInt8] {
        switch await RepositoryPoll(client: client).download(file) {
        case .success(let bytes): return bytes
        case .failure(.refused(let error)): throw refusal(error)
        case .failure(.unreachable(let reason)):
            failure = .unreachable
            throw FleetdError("\(file.path): \(reason)", hint: "the repository is unreachable; fleetd retries")
        }
    }

    private func refusal(_ error: TUFError) -> FleetdError {
        failure = .refused
        metrics.verificationFailed(error.kind)
        audit.record("repository.refused", ["kind": error.kind.rawValue, "role": error.role, "detail": error.detail])
        return FleetdError("\(error)", hint: "the last good policy stays installed")
    }

    // MARK: Policies

    private func installPolicies(_ set: TUFTrustedSet) async throws(FleetdError) {
        let (wanted, skipped) = PolicyInstaller.policies(in: set)
        for file in skipped { audit.record("policy.skipped", ["path": file.path, "reason": file.reason]) }
        var downloads: [String: [UInt8]] = [:]
        for (name, file) in wanted.sorted(by: { $0.key < $1.key })
        where state.installed[name] != TUFHex.encode(file.hashes["sha256"] ?? []) {
            downloads[name] = try await download(file)
        }
        let removed = state.installed.keys.filter { wanted[$0] == nil }
        guard !downloads.isEmpty || !removed.isEmpty else { return }
        state.installed = try PolicyInstaller(directory: paths.policyDirectory).install(
            downloads, wanted: wanted, installed: state.installed)
        for name in downloads.keys.sorted() {
            audit.record("policy.installed", ["file": name, "targets": "\(set.targets["targets"]?.version ?? 0)"])
        }
        for name in removed.sorted() { audit.record("policy.removed", ["file": name]) }
    }

    // MARK: Commands

    private func takeCommands(_ set: TUFTrustedSet, now: Date) async throws(FleetdError) -> Bool {
        guard let file = set.target(FleetCommandFile.path(for: key.id)) else { return false }
        let hash = TUFHex.encode(file.hashes["sha256"] ?? [])
        guard hash != state.commandFile else { return false }
        let bytes = try await download(file)
        let commands: FleetCommandFile
        do {
            commands = try FleetCommandFile(bytes)
        } catch {
            throw refusal(error)
        }
        let verdicts = FleetCommandCheck(device: key.id).verdicts(
            commands, listedBy: file.role, signers: set.signers[file.role] ?? 0, wipeThreshold: set.root.wipeThreshold,
            taken: state.takenDigests, now: now)
        let refreshNow = try handOn(verdicts, now: now)
        state.commandFile = hash
        return refreshNow
    }

    /// Hands each accepted command to the agents (idempotent: after a crash the same command finds
    /// its file there), audits each verdict and records it taken. Returns whether a `refresh` came.
    private func handOn(_ verdicts: [FleetCommandCheck.Verdict], now: Date) throws(FleetdError) -> Bool {
        var refreshNow = false
        let directory = paths.fleetDirectory + "/" + FleetHandoff.commandsDirectory
        try AtomicFile.makeDirectory(paths.fleetDirectory, mode: 0o755)
        try AtomicFile.makeDirectory(directory, mode: 0o755)
        for verdict in verdicts {
            switch verdict {
            case .accept(let command):
                let path = directory + "/" + FleetHandoff.commandFileName(command.counter)
                if !FileManager.default.fileExists(atPath: path) {
                    try AtomicFile.write(FleetHandoff.commandBytes(command, device: key.id, verifiedAt: now), to: path)
                }
                FleetdCrashPoint.reached(.handedOn)
                if command.kind == .refresh { refreshNow = true }
                audit.record("command.accepted", fields(command))
            case .refuse(let command, let reason):
                var fields = fields(command)
                fields["reason"] = reason.rawValue
                if reason.spendsCounter {
                    audit.record("command.refused", fields)
                } else {
                    // It spends no counter, so the same file is judged again each time it comes
                    // (the NATS account may send it at will): audited once a minute, counted each time.
                    auditOnceAMinute("command.refused", limitedBy: reason.rawValue, fields, now: now)
                }
            }
            metrics.command(verdict)
            if case .refuse(_, let reason) = verdict, !reason.spendsCounter { continue }
            let command = verdict.command
            if state.taken[command.counter] == nil { state.taken[command.counter] = TUFHex.encode(command.digest) }
        }
        return refreshNow
    }

    /// What a pushed command file led to.
    public enum PushOutcome: Sendable, Equatable {
        /// Verified; `handedOn` commands accepted (0: all taken before, or refused and audited).
        case taken(handedOn: Int, refreshNow: Bool)
        /// Not verified (audited `push.refused`), or not recorded: nothing handed on.
        case refused(String)
        /// Verified but older than what this machine took (its newest counter below the highest
        /// taken): a genuine file sent again, audited `push.stale`; nothing handed on.
        case stale(newest: Int, highestTaken: Int)
    }

    /// Takes a command file the push channel brought (`FleetPushedCommands`): verified against the
    /// delegation already trusted, judged as a listed one, handed on and recorded before returning;
    /// the machine's report then says what it took.
    public func takePushed(_ bytes: [UInt8], now: Date = Date()) async -> PushOutcome {
        let trusted: TUFTrustedSet
        let verified: FleetPushedCommands.Verified
        do {
            trusted = try self.trusted()
            verified = try FleetPushedCommands.verify(bytes, trusted: trusted, device: key.id, now: now)
        } catch {
            metrics.verificationFailed(error.kind)
            metrics.pushedFile(.refused)
            let kind = error.kind.rawValue
            auditOnceAMinute(
                "push.refused", limitedBy: kind, ["kind": kind, "role": error.role, "detail": error.detail], now: now)
            return .refused("\(error)")
        }
        let verdicts = FleetCommandCheck(device: key.id).verdicts(
            verified.file, listedBy: verified.role, signers: verified.signers,
            wipeThreshold: trusted.root.wipeThreshold, taken: state.takenDigests, now: now)
        guard !verdicts.isEmpty else {
            // Every command taken before. The stream's kept file read again is the newest one; an
            // older genuine file is sent again by someone (FleetdMetrics.PushedFile.stale).
            let newest = verified.file.commands.map(\.counter).max() ?? 0
            let highest = state.taken.keys.max() ?? 0
            guard newest < highest else {
                metrics.pushedFile(.repeated)
                return .taken(handedOn: 0, refreshNow: false)
            }
            metrics.pushedFile(.stale)
            auditOnceAMinute(
                "push.stale", limitedBy: "olderFile",
                ["kind": "olderFile", "newestInFile": "\(newest)", "highestTaken": "\(highest)"], now: now)
            return .stale(newest: newest, highestTaken: highest)
        }
        metrics.pushedFile(.judged)
        do {
            let refreshNow = try handOn(verdicts, now: now)
            FleetdCrashPoint.reached(.beforeSave)
            try state.save(to: paths.stateDirectory)
            let handed = verdicts.filter { if case .accept = $0 { true } else { false } }.count
            if handed > 0 { await report(trusted, now: now) }
            return .taken(handedOn: handed, refreshNow: refreshNow)
        } catch {
            logger.error("push: a command could not be handed on: \(error.message)")
            return .refused(error.message)
        }
    }

    private func fields(_ command: FleetCommand) -> [String: String] {
        var out = [
            "counter": "\(command.counter)", "kind": command.kind.rawValue, "expires": TUFDate.format(command.expires),
        ]
        if let app = command.app { out["app"] = app }
        if let reason = command.reason { out["reason"] = reason }
        return out
    }

    // MARK: Status and reports

    private func writeStatus(_ set: TUFTrustedSet?) throws(FleetdError) {
        let trusted = set ?? (try? state.trustedSet(shippedRoot: shippedRoot))
        let freshUntil = trusted?.freshUntil
        let status = FleetHandoff.Status(
            device: key.id, repository: configuration.repository, verifiedAt: state.verifiedAt, freshUntil: freshUntil,
            staleAfter: freshUntil.map { $0.addingTimeInterval(configuration.intervalSeconds) },
            versions: trusted?.versions ?? [:], lastError: state.lastError)
        try AtomicFile.makeDirectory(paths.fleetDirectory, mode: 0o755)
        try AtomicFile.write(status.bytes, to: paths.fleetDirectory + "/" + FleetHandoff.statusFile)
    }

    private func fail(_ message: String, now: Date) -> Result {
        state.lastError = message
        try? writeStatus(nil)
        try? state.save(to: paths.stateDirectory)
        logger.warning("poll failed", metadata: ["error": "\(message)"])
        return .failed(message)
    }

    private func report(_ set: TUFTrustedSet, now: Date) async {
        // The machine's posture as root reads it (the desktop's screen lock is a user's setting:
        // fleetd has no session to ask, so that check says unknown).
        let posture = PostureProbe(root: "/", command: { _, _ in nil }).run()
            .sorted { $0.check.rawValue < $1.check.rawValue }
        let report = FleetReport(
            device: key.id, publicKey: key.publicKey, time: now, versions: set.versions, policies: state.installed,
            lastCommand: state.taken.keys.max(), lastError: state.lastError, posture: posture)
        let signed = report.file(signature: key.sign(report.message))
        try? AtomicFile.write(signed, to: paths.fleetDirectory + "/report.json")
        let digest = report.contentDigest
        if let reportSink, digest != sunk, reportSink(signed) { sunk = digest }
        guard let base = configuration.reportURL, digest != state.reported else { return }
        do {
            try await client.put(signed, to: (base.hasSuffix("/") ? base : base + "/") + key.id + ".json")
            state.reported = digest
            try? state.save(to: paths.stateDirectory)
        } catch {
            logger.warning("report not sent", metadata: ["error": "\(error.message)"])
        }
    }
}
