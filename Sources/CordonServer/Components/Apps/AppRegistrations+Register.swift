import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSystem
import Crypto
import Foundation
import Logging
import NIOCore

extension AppRegistrations {
    /// Registers the app on `connection` as the policy says: managed (gets its key), unmanaged
    /// (state events only) or refused; a condition set to `wipe` wipes the container. With `pid`,
    /// the app is that child process of the caller (`cordon run`).
    /// `Register`.
    func serveRegister(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(RegisterParameters.self)
        return register(parameters.appId, pid: parameters.pid, connection: call.connection, encoder: call.encoder)
    }

    private func register(_ appId: String, pid: Int?, connection: AgentConnection, encoder: ReplyEncoder)
        -> CallOutcome
    {
        if let problem = AppIdentifier.problem(with: appId) {
            return .reply(encoder.error(CordonError.invalidAppId(appId: appId, reason: problem).varlinkError))
        }
        if let existing = registry.registrations[connection.id] {
            return .reply(encoder.error(CordonError.alreadyRegistered(appId: existing.appId).varlinkError))
        }
        let process: AppProcess
        do throws(CordonError) {
            process = try AppProcess.resolve(
                pid: pid, connection: connection, allowedUID: host.configuration.allowedUID)
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        // What the pool's thread needs is read here, on the loop: the work below captures no agent state.
        let binding = host.policy.policy.managedApps[appId]?.value
        let needsDigest = binding?.sha256 != nil
        let identity = process.identity
        let user = host.configuration.allowedUID
        let installations = host.configuration.flatpakInstallations
        let facts = host.storePool.runIfActive(eventLoop: host.loop) {
            Self.registrationFacts(
                appId: appId, identity: identity, needsDigest: needsDigest, bound: binding != nil, user: user,
                flatpakInstallations: installations)
        }
        // The device's posture, read off the loop too (docs/ARCHITECTURE.md, "Posture"), and only
        // when the app's policy acts on a check: a reading may run programs and take seconds.
        let reading =
            host.postureReading(for: appId)
        return .deferred(
            facts.and(reading).assumeIsolated().flatMap { [self] facts, checks in
                let reply: ByteBuffer
                do throws(CordonError) {
                    reply = encoder.reply(
                        try completeRegistration(facts, checks: checks, process: process, connection: connection))
                } catch {
                    reply = encoder.error(error.varlinkError)
                }
                // Answered once its audit record (a refusal, a warning) is stored.
                return host.auditStored().map { reply }
            }.nonisolated())
    }

    private func completeRegistration(
        _ facts: RegistrationFacts, checks: [PostureResult], process: AppProcess, connection: AgentConnection
    ) throws(CordonError) -> RegisterReply {
        let decision = host.policy.register(facts)
        let identity = process.identity
        // The facts were read off the loop: the process must still be the one they describe.
        if let change = process.fingerprint?.change(to: ProcessFingerprint.read(pid: identity.pid)) {
            throw .invalidProcess(pid: Int(identity.pid), reason: change)
        }
        let metadata: Logger.Metadata = [
            "appId": "\(facts.appId)", "pid": "\(identity.pid)", "exe": "\(identity.executable)",
            "outcome": "\(decision.outcome.rawValue)", "reason": "\(decision.reason)",
        ]
        for warning in decision.warnings { logger.warning("registration condition: \(warning)", metadata: metadata) }
        if decision.outcome != .managed || decision.wipe || !decision.warnings.isEmpty || host.configuration.auditAllows
        {
            host.writeAudit([
                AuditEntry(
                    time: host.clock(), category: .decision, appId: facts.appId,
                    action: PolicyAction.appRegister.rawValue,
                    outcome: decision.outcome.rawValue, reason: decision.reason,
                    rules: decision.rules.map(\.description))
            ])
        }
        if decision.wipe {
            logger.critical("a policy condition wipes the container", metadata: metadata)
            host.run(.forceWipe(reason: .policy, now: host.clock()))
        }
        guard decision.outcome != .refused else {
            logger.warning("app refused by policy", metadata: metadata)
            throw .refused(appId: facts.appId, reason: decision.reason)
        }
        // The device's posture: `block` refuses, `wipe` erases the app's data and refuses.
        try host.admitPosture(facts.appId, checks: checks)
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in String(format: "%02x", generator.next() as UInt8) }.joined()
        let managed = decision.outcome == .managed
        guard host.connection(connection.id) != nil else { throw .notRegistered }
        // One live registration per managed app: a second is refused while the first's process lives.
        if managed,
            let other = registry.registrations.values.first(where: {
                $0.managed && $0.appId == facts.appId && $0.connection != connection.id
            }), processes[other.connection]?.pidfd?.isAlive ?? true
        {
            logger.warning("app refused: already registered", metadata: metadata)
            throw .appIdInUse(appId: facts.appId, pid: other.pid)
        }
        try registry.register(
            AppRegistration(
                connection: connection.id, appId: facts.appId, pid: Int(identity.pid),
                ownerPid: Int(connection.identity.pid), executable: identity.executable, managed: managed, token: token)
        )
        var registered = process
        registered.injection = facts.injection
        processes[connection.id] = registered
        if let registration = registry.registrations[connection.id] {
            host.appRegistered(registration, process: registered)
        }
        logger.info("app registered", metadata: metadata)
        host.registeredAppsChanged()
        return RegisterReply(appId: facts.appId, managed: managed, token: token)
    }

    /// The facts about a registering client, read from `/proc` (and its executable's digest when
    /// the app's binding asks for one): its namespace and, when it claims one, its Flatpak sandbox
    /// checked against `flatpakInstallations` (docs/THREAT-MODEL.md, "Sandboxed apps").
    ///
    /// A `bound` host app's code is judged by what it maps, not by what its environment says
    /// now (a library's constructor can rewrite `LD_PRELOAD=` before the app registers): every
    /// file it maps executable must be a root-owned file no one else can write, except its own
    /// executable when the binding checks its digest; another counts as injected
    /// (`conditions.preloadInjected`, docs/THREAT-MODEL.md, "App identity").
    static func registrationFacts(
        appId: String, identity: PeerIdentity, needsDigest: Bool, bound: Bool, user: UInt32,
        flatpakInstallations: [String]
    ) -> RegistrationFacts {
        let pid = identity.pid
        var digest: String?
        if needsDigest {
            digest = Self.sha256(ofFileAt: "/proc/\(pid)/exe")
        }
        let sandbox: SandboxFact? =
            switch FlatpakSandbox.verify(pid: pid, installations: flatpakInstallations) {
            case .verified(let appId): .flatpak(appId: appId)
            case .unverified(let why): .unverified(why)
            case nil: nil
            }
        var injection = ProcessInfoReader.injection(of: pid)
        if bound, sandbox == nil, injection == nil {
            var executable = stat()
            let exempt =
                needsDigest && stat("/proc/\(pid)/exe", &executable) == 0
                ? (device: UInt64(executable.st_dev), inode: UInt64(executable.st_ino)) : nil
            injection = ExecutableMappings.problem(pid: pid, exempt: exempt)
        }
        return RegistrationFacts(
            appId: appId, executable: identity.executable, sha256: digest,
            debuggerAttached: (ProcessInfoReader.tracerPID(of: pid) ?? 0) != 0,
            injection: injection,
            // Unreadable counts as made: the check must not pass by failing.
            inUserMadeNamespace: ProcessInfoReader.inUserNamespaceMade(by: user, pid: pid) ?? true,
            sandbox: sandbox)
    }

    /// Lower-case hex SHA-256 of a file, read in chunks; nil when unreadable.
    static func sha256(ofFileAt path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

}
