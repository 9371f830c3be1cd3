import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import Foundation
import NIOCore

extension Agent {
    /// Applies what was read from the policy directories: accepted files replace their last good
    /// version, rejected ones leave it in force, removed ones drop out. Emits `PolicyDidChange`
    /// when the effective policy changed.
    @discardableResult
    func applyPolicy(_ snapshot: PolicySnapshot, initial: Bool = false) -> EventLoopFuture<Void> {
        let now = clock()
        let present = Set(snapshot.files.map(\.source.path))
        lastGoodPolicies = lastGoodPolicies.filter { present.contains($0.key) }
        var audit: [AuditRecord] = []
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
                AuditRecord(
                    time: now, category: "policy", appId: nil, action: "policy.load", outcome: "rejected",
                    reason: file.problems.joined(separator: "\n"), rules: file.source.path))
        }
        for problem in snapshot.trustProblems { logger.error("trust directory: \(problem)") }
        policySnapshot = snapshot
        let documents = lastGoodPolicies.values.sorted { $0.source < $1.source }.compactMap { file in
            file.document.map { ($0, file.source) }
        }
        let next = PolicyEvaluator(
            EffectivePolicy.merge(documents, fallback: (configuration.defaultPolicy, BuiltinPolicy.source)))
        let changed = next.versionHash != policy.versionHash
        policy = next
        if changed || initial {
            policyAppliedAt = now
            machine.configuration = lifecycleConfiguration(from: next.policy)
        }
        if changed && !initial {
            logger.notice("policy applied", metadata: ["version": "\(next.versionHash)"])
            audit.append(
                AuditRecord(
                    time: now, category: "policy", appId: nil, action: "policy.apply", outcome: "applied",
                    reason: "policy version \(next.versionHash)",
                    rules: ([BuiltinPolicy.source.path] + documents.map(\.1.path)).joined(separator: "\n")))
            run(.policyChanged(version: next.versionHash, now: now))
        }
        return audit.isEmpty ? loop.makeSucceededVoidFuture() : writeAudit(audit)
    }

    /// The lifecycle settings the policy dictates while the apps registered now are: the base
    /// `lock` section tightened by their overrides' container-wide keys (`LockSettingScope`). The
    /// daemon's back-off stays.
    func lifecycleConfiguration(from effective: EffectivePolicy) -> LifecycleConfiguration {
        let defaults = configuration.lifecycle
        let lock = containerLock(of: effective)
        let passcode = effective.passcode
        return LifecycleConfiguration(
            idleTimeoutSeconds: lock.idleTimeoutSeconds.value,
            reauthGraceSeconds: lock.reauthGraceSeconds.value ?? defaults.reauthGraceSeconds,
            discardKeyOnLock: lock.discardKeyOnLock.value,
            maxAttempts: passcode.maxAttempts.value ?? defaults.maxAttempts,
            ackDeadlineMs: lock.ackDeadlineMs.value ?? defaults.ackDeadlineMs,
            minPasscodeLength: max(passcode.minLength.value, 1), backoff: defaults.backoff,
            onMaxAttempts: passcode.onMaxAttempts.value == .wipe ? .wipe : .lockout)
    }

    /// The container-wide lock settings in force: the base tightened by every registered app's override.
    func containerLock(of effective: EffectivePolicy? = nil) -> EffectiveLockSettings {
        (effective ?? policy.policy).containerLock(registeredApps: registry.registrations.values.map(\.appId))
    }

    /// Recomputes the lifecycle settings after the registered apps changed (an override's
    /// container-wide lock keys apply only while its app is registered), and re-arms the timers.
    func registeredAppsChanged() {
        let next = lifecycleConfiguration(from: policy.policy)
        guard next != machine.configuration else { return }
        machine.configuration = next
        logger.info(
            "lock settings follow the registered apps",
            metadata: [
                "idleTimeoutSeconds": "\(next.idleTimeoutSeconds)", "reauthGraceSeconds": "\(next.reauthGraceSeconds)",
                "discardKeyOnLock": "\(next.discardKeyOnLock)",
            ])
        rescheduleTimer()
        stateObserver?()
    }

    /// The passcode rules the policy dictates.
    var passcodeRules: PasscodeRules {
        let passcode = policy.policy.passcode
        return PasscodeRules(
            minLength: max(passcode.minLength.value, 1), requireAlphanumeric: passcode.kind.value == .alphanumeric,
            allowSimple: passcode.allowSimple.value)
    }

    /// Starts watching the policy directories; changes reload (debounced).
    func startPolicyWatcher() {
        guard let directories = configuration.policyDirectories, policyWatcher == nil else { return }
        let loop = self.loop
        // The watcher calls back on its own thread: it reaches the agent only back on the loop.
        let agent = onLoop
        do {
            policyWatcher = try DirectoryWatcher(directories: [directories.admin, directories.user, directories.trust])
            {
                loop.execute { agent.value.scheduleReload() }
            }
        } catch {
            logger.error("cannot watch the policy directories; use `cordon policy reload`: \(error)")
        }
    }

    /// Reloads shortly, coalescing a burst of file events (an editor's save, a `push`).
    func scheduleReload() {
        guard !reloadScheduled, !isShuttingDown else { return }
        reloadScheduled = true
        loop.assumeIsolated().scheduleTask(in: .milliseconds(50)) { [self] in
            reloadScheduled = false
            _ = reloadPolicy()
        }
    }

    /// Reads the directories off the loop, then applies on it.
    func reloadPolicy() -> EventLoopFuture<Void> {
        guard let directories = configuration.policyDirectories else { return loop.makeSucceededVoidFuture() }
        return storePool.runIfActive(eventLoop: loop) { PolicyLoader.load(directories) }.assumeIsolated().flatMap {
            [self] snapshot in applyPolicy(snapshot)
        }.nonisolated()
    }

    /// The policy status for `io.cordon.Policy.GetStatus` / `Reload`.
    func policyStatus() -> PolicyStatusReply {
        let directories = configuration.policyDirectories
        var sources = [
            WirePolicySource(
                path: BuiltinPolicy.source.path, origin: "builtin", status: "applied", problems: [], signedBy: nil)
        ]
        for file in policySnapshot.files {
            let applied = file.accepted
            let kept = !applied && lastGoodPolicies[file.source.path] != nil
            sources.append(
                WirePolicySource(
                    path: file.source.path, origin: file.source.origin.rawValue,
                    status: applied ? "applied" : (kept ? "rejected (last good version in force)" : "rejected"),
                    problems: file.problems, signedBy: file.signedBy ?? lastGoodPolicies[file.source.path]?.signedBy))
        }
        return PolicyStatusReply(
            version: policy.versionHash, appliedAt: policyAppliedAt, sources: sources,
            adminDirectory: directories?.admin ?? "", userDirectory: directories?.user ?? "",
            trustDirectory: directories?.trust ?? "", trustedKeys: policySnapshot.trustedKeys)
    }
}
