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

extension Agent {
    /// The registration of `connection`, verified again for `use`: it exists, it is managed and
    /// registered by its own process (a registration on a child's behalf gets enforcement only),
    /// that process is still the very one that registered (same pidfd, start time and executable:
    /// no `exec` since), and the policy's conditions still hold (no debugger attached now, no
    /// library injected when the image started, as read at registration: the dynamic linker acts
    /// only then). A condition set to `block` refuses the call; `wipe` wipes the container.
    func verifiedRegistration(_ connection: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        guard let registration = registry.registrations[connection.id] else { throw .notRegistered }
        let appId = registration.appId
        guard let process = processes[connection.id] else { throw .notRegistered }
        guard !process.onBehalf else { throw .registeredOnBehalf(appId: appId) }
        guard registration.managed else { throw .notManaged(appId: appId) }
        // A posture check set to block revoked the app's key (docs/ARCHITECTURE.md, "Posture").
        try posture.checkNotBlocked(appId)
        let pid = process.identity.pid
        // With a pidfd, the executable is read first and the pidfd asked afterwards whether the
        // process lives: if it does, the pid was this process all along, so its start time needs
        // no reading (`ProcessFingerprint.read(pid:startTime:)`).
        let known = process.pidfd == nil ? nil : process.fingerprint?.startTime
        let now = ProcessFingerprint.read(pid: pid, startTime: known)
        if let pidfd = process.pidfd, !pidfd.isAlive {
            throw .processChanged(appId: appId, reason: "the process has exited")
        }
        if let change = process.fingerprint?.change(to: now) {
            refuse(registration, use: use, reason: change)
            throw .processChanged(appId: appId, reason: change)
        }
        let settings = policy.policy.forApp(appId)
        var findings: [(PolicySetting<ConditionAction, ConditionAction>, String)] = []
        if (ProcessInfoReader.tracerPID(of: pid) ?? 0) != 0 {
            findings.append((PolicyKeys.Conditions.debuggerAttached, "a debugger is attached"))
        }
        if let injection = process.injection {
            findings.append((PolicyKeys.Conditions.preloadInjected, "a library is injected: \(injection)"))
        }
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
                run(.forceWipe(reason: .policy, now: clock()))
                throw .processChanged(appId: appId, reason: reason)
            }
        }
        return registration
    }

    /// The registration that `token` names, verified for `use`, when `caller` is a connection of
    /// the very process that registered it; without a token, `caller`'s own registration.
    func verifiedRegistration(token: String?, caller: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        guard let token else { return try verifiedRegistration(caller, for: use) }
        guard let owner = registry.connection(token: token, pid: Int(caller.identity.pid)),
            let connection = connections[owner]
        else { throw .invalidToken }
        return try verifiedRegistration(connection, for: use)
    }

    /// Logs and audits a refused call of a registration that no longer verifies.
    private func refuse(_ registration: AppRegistration, use: RegistrationUse, reason: String) {
        logger.warning(
            "call refused: the registered process changed",
            metadata: ["appId": "\(registration.appId)", "use": "\(use.rawValue)", "reason": "\(reason)"])
        writeAudit([
            AuditEntry(
                time: clock(), category: .decision, appId: registration.appId, action: "app.\(use.rawValue)",
                outcome: "refused", reason: reason, rules: [])
        ])
    }
}
