import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Crypto
import Foundation
import NIOCore

extension Agent {
    /// `io.cordon.App.Check`: the policy's decision for the app on `connection`; denies are audited.
    /// A `document.save` target is canonicalised first; one whose directory does not resolve is denied.
    func check(_ call: CheckCall, connection: AgentConnection) throws(CordonError) -> (
        CordonDecision, EventLoopFuture<Void>?
    ) {
        let registration = registry.registrations[connection.id]
        let app = AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
        var request = try decisionRequest(
            action: call.action, app: app, target: call.target, contentType: call.contentType, length: call.length)
        let decision: PolicyDecision
        if request.action == .documentSave, let location = request.location {
            // `document.save` is decided on the canonical destination: the directory's real path
            // (`..`, `.` and symlinks resolved) plus the file name, so that neither `..` nor a
            // symlinked directory leads out of `saveLocations`.
            do {
                request.location = try OpenedDocument.canonicalDestination(location)
                decision = policy.decide(request)
            } catch {
                decision = PolicyDecision(allowed: false, action: .documentSave, reason: error.description, rules: [])
            }
        } else {
            decision = policy.decide(request)
        }
        let stored = auditDecision(decision, appId: registration?.appId)
        return (Self.wire(decision), stored)
    }

    /// Audits and logs `decision`: every deny, and allows when configured.
    @discardableResult
    func auditDecision(_ decision: PolicyDecision, appId: String?) -> EventLoopFuture<Void>? {
        guard !decision.allowed || configuration.auditAllows else { return nil }
        let stored = writeAudit([
            AuditEntry(
                time: clock(), category: .decision, appId: appId, action: decision.action.rawValue,
                outcome: decision.allowed ? "allow" : "deny", reason: decision.reason,
                rules: decision.rules.map(\.description))
        ])
        logger.info(
            "policy decision",
            metadata: [
                "appId": "\(appId ?? "-")", "action": "\(decision.action.rawValue)",
                "allowed": "\(decision.allowed)", "reason": "\(decision.reason)",
            ])
        return stored
    }

    /// Builds a decision request; the peer is managed when the policy binds its id.
    func decisionRequest(action name: String, app: AppFacts, target: String?, context: [String: String]?)
        throws(CordonError) -> DecisionRequest
    {
        try decisionRequest(
            action: name, app: app, target: target, contentType: context?["contentType"], length: context?["length"])
    }

    /// Builds a decision request from the two context entries a decision reads.
    func decisionRequest(action name: String, app: AppFacts, target: String?, contentType: String?, length: String?)
        throws(CordonError) -> DecisionRequest
    {
        guard let action = PolicyAction(rawValue: name), action != .appRegister else {
            throw .unknownAction(action: name)
        }
        let isSave = action == .documentSave
        let peer = isSave ? nil : target.map { AppFacts(id: $0, managed: isManagedByPolicy($0)) }
        return DecisionRequest(
            action: action, app: app, peer: peer, location: isSave ? target : nil,
            contentType: contentType, length: length.flatMap { Int($0) })
    }

    /// Whether an app id counts as managed: bound in `apps.managed`, or unbound while
    /// `apps.unknown` is `trusted` (the same rule registration follows).
    func isManagedByPolicy(_ appId: String) -> Bool {
        policy.compiled.isManaged(appId)
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

    static func wire(_ decision: PolicyDecision) -> CordonDecision {
        CordonDecision(
            allowed: decision.allowed, action: decision.action, reason: decision.reason,
            truncateTo: decision.truncationLimit,
            rules: decision.rules.map(\.description))
    }
}
