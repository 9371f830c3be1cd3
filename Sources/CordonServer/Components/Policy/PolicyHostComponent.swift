import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore

/// The policy host (`io.cordon.Policy`): loads the admin and user policy files, watches them,
/// applies what parses, validates and verifies (a rejected file keeps its last good version in
/// force), and explains, validates and reports the policy in force.
final class PolicyHostComponent: InterfaceComponent {
    private unowned let host: any ComponentHost
    /// The policy in force, compiled for decisions.
    private(set) var evaluator: PolicyEvaluator
    /// The last accepted version of each policy file, by path: a rejected file never replaces it.
    private var lastGoodPolicies: [String: LoadedPolicyFile] = [:]
    private var policySnapshot = PolicySnapshot(files: [], trustedKeys: 0, trustProblems: [])
    private var policyAppliedAt: Double = 0
    private var policyWatcher: DirectoryWatcher?
    private var reloadScheduled = false
    /// A reload at the earliest signature expiry of the files in force, so an expired file
    /// leaves the policy without waiting for a change.
    private var expiryReload: Scheduled<Void>?

    init(host: any ComponentHost) {
        self.host = host
        evaluator = PolicyEvaluator(
            EffectivePolicy.merge([], fallback: (host.configuration.defaultPolicy, BuiltinPolicy.source)))
    }

    private var loop: any EventLoop { host.loop }
    private var logger: Logger { host.logger }
    private var configuration: AgentConfiguration { host.configuration }
    private var policy: PolicyEvaluator { evaluator }
    private func clock() -> Double { host.clock() }

    func serve(_ method: Method.Policy, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let encoder = call.encoder
        switch method {
        case .getEffective:
            return .reply(encoder.reply(effectivePolicy()))
        case .validate:
            return .reply(encoder.reply(validate(try call.parameters(ValidateParameters.self))))
        case .explain:
            let parameters = try call.parameters(ExplainParameters.self)
            return .reply(encoder.reply(try typed { () throws(CordonError) in try explain(parameters) }))
        case .reload:
            // The status is taken first and answered once every record up to it is stored: a
            // watcher's apply landing meanwhile must not be reported before it is audited.
            return .deferred(
                reload().assumeIsolated().flatMap { [self] in
                    let status = status()
                    return host.auditStored().map { encoder.reply(PolicyStatusReply(status: status)) }
                }.nonisolated())
        case .getStatus:
            return .reply(encoder.reply(PolicyStatusReply(status: status())))
        }
    }

    func shutdown() {
        policyWatcher?.stop()
        policyWatcher = nil
        expiryReload?.cancel()
        expiryReload = nil
    }

    /// Reads the policy directories now (at start, before serving).
    func loadInitial() {
        if let directories = configuration.policyDirectories {
            apply(PolicyLoader.load(directories, now: clock(), database: host.database), initial: true)
        } else {
            apply(PolicySnapshot(files: [], trustedKeys: 0, trustProblems: []), initial: true)
        }
    }

    /// Applies what was read from the policy directories: accepted files replace their last good
    /// version, rejected ones leave it in force, removed ones drop out. Emits `PolicyDidChange`
    /// when the effective policy changed.
    @discardableResult
    func apply(_ snapshot: PolicySnapshot, initial: Bool = false) -> EventLoopFuture<Void> {
        let now = clock()
        let present = Set(snapshot.files.map(\.source.path))
        // An expired signature is no last good version: it leaves the policy.
        lastGoodPolicies = lastGoodPolicies.filter { present.contains($0.key) && ($0.value.expires ?? .infinity) > now }
        var audit: [AuditEntry] = []
        for file in snapshot.files {
            if file.accepted {
                lastGoodPolicies[file.source.path] = file
                continue
            }
            let kept = lastGoodPolicies[file.source.path] != nil
            logger.error(
                "policy file rejected; \(kept ? "its last good version stays in force" : "it is not applied")",
                metadata: ["file": "\(file.source.path)", "problems": "\(file.problems.joined(separator: " | "))"])
            audit.append(
                AuditEntry(
                    time: now, category: .policy, appId: nil, action: "policy.load", outcome: "rejected",
                    reason: file.problems.joined(separator: "\n"), rules: [file.source.path]))
        }
        for problem in snapshot.trustProblems { logger.error("trust directory: \(problem)") }
        policySnapshot = snapshot
        let documents = lastGoodPolicies.values.sorted { $0.source < $1.source }.compactMap { file in
            file.document.map { ($0, file.source) }
        }
        let next = PolicyEvaluator(
            EffectivePolicy.merge(documents, fallback: (configuration.defaultPolicy, BuiltinPolicy.source)))
        let changed = next.versionHash != policy.versionHash
        evaluator = next
        scheduleExpiryReload(now: now)
        if changed || initial {
            policyAppliedAt = now
            host.policyApplied()
        }
        if changed && !initial {
            logger.notice("policy applied", metadata: ["version": "\(next.versionHash)"])
            audit.append(
                AuditEntry(
                    time: now, category: .policy, appId: nil, action: "policy.apply", outcome: "applied",
                    reason: "policy version \(next.versionHash)",
                    rules: [BuiltinPolicy.source.path] + documents.map(\.1.path)))
            host.run(.policyChanged(version: next.versionHash, now: now))
        }
        return audit.isEmpty ? loop.makeSucceededVoidFuture() : host.writeAudit(audit)
    }

    /// Starts watching the policy directories; changes reload (debounced).
    func startWatcher() {
        guard let directories = configuration.policyDirectories, policyWatcher == nil else { return }
        let loop = self.loop
        // The watcher calls back on its own thread: it reaches this component only back on the loop.
        let component = NIOLoopBound(self, eventLoop: loop)
        do {
            policyWatcher = try DirectoryWatcher(
                directories: [directories.watchedAdmin, directories.user, directories.watchedTrust]) {
                    loop.execute { component.value.scheduleReload() }
                }
        } catch {
            logger.error("cannot watch the policy directories; use `cordon policy reload`: \(error)")
        }
    }

    /// Reloads shortly, coalescing a burst of file events (an editor's save, a `push`).
    func scheduleReload() {
        guard !reloadScheduled, !host.isShuttingDown else { return }
        reloadScheduled = true
        loop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { [self] in
            reloadScheduled = false
            _ = reload()
        }
    }

    /// Schedules a reload for when the first signature of a file in force expires.
    private func scheduleExpiryReload(now: Double) {
        expiryReload?.cancel()
        expiryReload = nil
        guard let first = lastGoodPolicies.values.compactMap(\.expires).min(), !host.isShuttingDown else { return }
        let delay = TimeAmount.milliseconds(Int64(min(max(0, first - now), 400 * 86400) * 1000) + 1)
        expiryReload = loop.assumeIsolated().scheduleTask(in: delay) { [self] in
            expiryReload = nil
            _ = reload()
        }
    }

    /// Reads the directories off the loop, then applies on it.
    func reload() -> EventLoopFuture<Void> {
        guard let directories = configuration.policyDirectories else { return loop.makeSucceededVoidFuture() }
        let now = clock()
        let database = host.database
        return host.storePool.runIfActive(eventLoop: loop) {
            PolicyLoader.load(directories, now: now, database: database)
        }.assumeIsolated().flatMap {
            [self] snapshot in apply(snapshot)
        }.nonisolated()
    }

    /// The policy status for `io.cordon.Policy.GetStatus` / `Reload`.
    func status() -> PolicyStatus {
        let directories = configuration.policyDirectories
        var sources = [
            PolicySourceStatus(
                path: BuiltinPolicy.source.path, origin: .builtin, status: .applied, problems: [], signedBy: nil)
        ]
        for file in policySnapshot.files {
            let applied = file.accepted
            let kept = !applied && lastGoodPolicies[file.source.path] != nil
            sources.append(
                PolicySourceStatus(
                    path: file.source.path, origin: file.source.origin,
                    status: applied ? .applied : (kept ? .rejectedLastGoodInForce : .rejected),
                    problems: file.problems, signedBy: file.signedBy ?? lastGoodPolicies[file.source.path]?.signedBy))
        }
        return PolicyStatus(
            version: policy.versionHash, appliedAt: policyAppliedAt, sources: sources,
            adminDirectory: directories?.admin ?? "", userDirectory: directories?.user ?? "",
            trustDirectory: directories?.trust ?? "", trustedKeys: policySnapshot.trustedKeys)
    }

    /// `io.cordon.Policy.Explain`.
    private func explain(_ parameters: ExplainParameters) throws(CordonError) -> ExplainReply {
        let app = AppFacts(id: parameters.appId, managed: host.isManagedByPolicy(parameters.appId))
        let explanation: PolicyExplanation
        if parameters.action == PolicyAction.appRegister.rawValue {
            explanation = policy.explain(
                RegistrationFacts(appId: parameters.appId, executable: parameters.target ?? ""))
        } else {
            explanation = policy.explain(
                try host.decisionRequest(
                    action: parameters.action, app: app, target: parameters.target, context: parameters.context))
        }
        let steps = explanation.steps.map { step in
            WireExplanationStep(
                setting: step.setting, value: step.value,
                candidates: step.candidates.map {
                    WireCandidate(rule: $0.rule.description, value: $0.value, won: $0.won)
                })
        }
        return ExplainReply(decision: DecisionsComponent.wire(explanation.decision), steps: steps)
    }

    /// `io.cordon.Policy.Validate`.
    private func validate(_ parameters: ValidateParameters) -> ValidateReply {
        let source = PolicySource(path: parameters.path ?? "<inline>", origin: parameters.user == true ? .user : .admin)
        switch PolicyParser.parse(parameters.document, source: source) {
        case .success: return ValidateReply(valid: true, problems: [])
        case .failure(let failure):
            return ValidateReply(
                valid: false,
                problems: failure.diagnostics.map {
                    WireProblem(
                        path: $0.path, pointer: $0.pointer, line: $0.line, column: $0.column, message: $0.message)
                })
        }
    }

    /// `io.cordon.Policy.GetEffective`.
    private func effectivePolicy() -> EffectivePolicyReply {
        EffectivePolicyReply(
            version: policy.versionHash,
            settings: policy.describeEffective().map {
                WireSetting(path: $0.path, value: $0.value, rules: $0.rules.map(\.description), json: $0.json)
            })
    }
}
