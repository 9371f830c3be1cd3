import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSystem
import Logging

/// What a call needs of the registration it acts for (docs/THREAT-MODEL.md, "App identity").
enum RegistrationUse: String {
    /// The app's key: its own managed process only.
    case key
    /// The app's data: the pasteboard, documents, storage.
    case data
    /// Keeping the container unlocked (`ReportActivity`).
    case activity
}

extension AppRegistrations {
    /// The registration of `connection`, verified again for `use`: it exists, it is managed and
    /// registered by its own process (a registration on a child's behalf gets enforcement only),
    /// that process is still the very one that registered, and the policy's conditions still hold
    /// (docs/THREAT-MODEL.md, "App identity"). A condition set to `block` refuses the call; `wipe`
    /// wipes the container.
    ///
    /// Prevention, not detection: a key or data goes only to a process that has made itself
    /// non-dumpable (``CordonError/processNotHardened(appId:)`` until it has), because then no
    /// process of its user can trace it or read its memory. The first call that finds it so also
    /// finds no tracer attached (one that attached before it hardened would keep its hold); every
    /// later call checks only that it lives and is still non-dumpable — an `exec` would have made
    /// it dumpable again — through the `/proc` directory held since it registered: an `fstatat`
    /// and a `poll`. A process running as root (only where the agent itself runs as root) shows
    /// no dumpability in `/proc`: its executable and tracer are read on every call instead.
    func verifiedRegistration(_ connection: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        guard let registration = registry.registrations[connection.id] else { throw .notRegistered }
        let appId = registration.appId
        guard let process = processes[connection.id] else { throw .notRegistered }
        guard !process.onBehalf else { throw .registeredOnBehalf(appId: appId) }
        guard registration.managed else { throw .notManaged(appId: appId) }
        // A posture check set to block revoked the app's key (docs/ARCHITECTURE.md, "Posture").
        try host.checkPostureNotBlocked(appId)
        var findings: [(PolicySetting<ConditionAction, ConditionAction>, String)] = []
        var hardensNow = false
        if let directory = process.directory, let pidfd = process.pidfd {
            let dumpability = directory.dumpability(uid: process.identity.uid)
            // Asked after the owner was read: a process in the middle of exiting reads as root's.
            if dumpability == .exited || pidfd.hasExited {
                throw .processChanged(appId: appId, reason: "the process has exited")
            }
            switch dumpability {
            case .nonDumpable where !process.hardened:
                hardensNow = true
                if (ProcessInfoReader.tracerPID(of: process.identity.pid) ?? 0) != 0 {
                    findings.append((PolicyKeys.Conditions.debuggerAttached, "a debugger is attached"))
                }
            case .nonDumpable, .exited:
                break
            case .dumpable:
                if process.hardened {
                    let reason = "the process became dumpable again (it exec'd another program)"
                    refuse(registration, use: use, reason: reason)
                    throw .processChanged(appId: appId, reason: reason)
                }
                // Keeping the container unlocked hands out nothing to read.
                if use != .activity {
                    refuse(registration, use: use, reason: "the process is dumpable")
                    throw .processNotHardened(appId: appId)
                }
            case .unknown:
                try checkExecutable(process, registration: registration, use: use)
                if (ProcessInfoReader.tracerPID(of: process.identity.pid) ?? 0) != 0 {
                    findings.append((PolicyKeys.Conditions.debuggerAttached, "a debugger is attached"))
                }
            }
        } else {
            throw .processChanged(appId: appId, reason: "the process has exited")
        }
        if let injection = process.injection {
            findings.append((PolicyKeys.Conditions.preloadInjected, "a library is injected: \(injection)"))
        }
        try apply(findings, registration: registration, use: use)
        if hardensNow { processes[connection.id]?.hardened = true }
        return registration
    }

    /// For a process whose dumpability `/proc` does not show (root's): refuses the call unless it
    /// still runs the executable it registered with.
    private func checkExecutable(_ process: AppProcess, registration: AppRegistration, use: RegistrationUse)
        throws(CordonError)
    {
        let now = ProcessFingerprint.read(pid: process.identity.pid, startTime: process.fingerprint?.startTime)
        if process.pidfd?.hasExited ?? true {
            throw .processChanged(appId: registration.appId, reason: "the process has exited")
        }
        if let change = process.fingerprint?.change(to: now) {
            refuse(registration, use: use, reason: change)
            throw .processChanged(appId: registration.appId, reason: change)
        }
    }

    /// Applies the policy's action for each condition the process fails now.
    private func apply(
        _ findings: [(PolicySetting<ConditionAction, ConditionAction>, String)], registration: AppRegistration,
        use: RegistrationUse
    ) throws(CordonError) {
        let appId = registration.appId
        let settings = host.policy.policy.forApp(appId)
        for (condition, detail) in findings {
            let action = settings[condition].value
            let reason = "\(condition.name) is \(action.rawValue) and \(detail)"
            switch action {
            case .warn:
                logger.warning(
                    "registered app no longer passes a condition",
                    metadata: ["appId": "\(appId)", "reason": "\(reason)"])
            case .block:
                refuse(registration, use: use, reason: reason)
                throw .processChanged(appId: appId, reason: reason)
            case .wipe:
                refuse(registration, use: use, reason: reason)
                logger.critical("a policy condition wipes the container", metadata: ["appId": "\(appId)"])
                host.run(.forceWipe(reason: .policy, now: host.clock()))
                throw .processChanged(appId: appId, reason: reason)
            }
        }
    }

    /// The registration that `token` names, verified for `use`, when `caller` is a connection of
    /// the very process that registered it; without a token, `caller`'s own registration.
    func verifiedRegistration(token: String?, caller: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        guard let token else { return try verifiedRegistration(caller, for: use) }
        guard let owner = registry.connection(token: token, pid: Int(caller.identity.pid)),
            let connection = host.connection(owner)
        else { throw .invalidToken }
        return try verifiedRegistration(connection, for: use)
    }

    /// Logs and audits a refused call of a registration that no longer verifies.
    private func refuse(_ registration: AppRegistration, use: RegistrationUse, reason: String) {
        logger.warning(
            "call refused: the registered process changed",
            metadata: ["appId": "\(registration.appId)", "use": "\(use.rawValue)", "reason": "\(reason)"])
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: .decision, appId: registration.appId, action: "app.\(use.rawValue)",
                outcome: "refused", reason: reason, rules: [])
        ])
    }
}
