import CordonLifecycle
import CordonPolicy
import CordonProtocol
import NIOCore

/// Conditional launch from the device's posture (docs/ARCHITECTURE.md, "Posture"): each check's
/// `conditions` action, the strictest winning, at registration and after every reading.
///
/// - `warn`: a `PostureWarning` event to the app (when it subscribes, and again when the failing
///   checks change), audited.
/// - `block`: the registration is refused (`PostureRefused`); a registered app's key is revoked
///   (`EncryptionKeyUnavailable` with reason `posture`, to that app only) and every call needing
///   its registration is refused until the check passes again, when `EncryptionKeyAvailable`
///   with reason `posture` gives it back.
/// - `wipe`: the app's data is crypto-erased through the selective wipe, and it is blocked.
extension PostureComponent {
    /// Decides a registration: throws `postureRefused` for a `block` or `wipe` finding (a `wipe`
    /// erases the app's data first); otherwise returns the warnings to remember.
    func admit(_ appId: String, checks: [PostureResult]) throws(CordonError) {
        let verdict = host.policy.posture(appId: appId, checks: checks)
        switch verdict.action {
        case .ignore:
            warned[appId] = nil
        case .warn:
            // Every registration that warns is audited, even with the same checks as before.
            warned[appId] = nil
            warn(appId, verdict.warnings, when: "registration")
        case .block, .wipe:
            guard let finding = verdict.deciding else { return }
            audit(appId, "posture.register", outcome: "refused", finding)
            if finding.action == .wipe { wipe(appId, finding) }
            host.logger.warning(
                "registration refused by the device posture",
                metadata: ["appId": "\(appId)", "reason": "\(finding.reason)"])
            throw .postureRefused(appId: appId, check: finding.result.check.rawValue, evidence: finding.result.evidence)
        }
    }

    /// Refuses every call of a registration whose key the posture revoked.
    func checkNotBlocked(_ appId: String) throws(CordonError) {
        guard let finding = blocked[appId] else { return }
        throw .postureRefused(appId: appId, check: finding.result.check.rawValue, evidence: finding.result.evidence)
    }

    /// A new reading: each registered app's verdict, acted on where it changed.
    func reevaluate(_ checks: [PostureResult]) {
        let apps = Set(host.registry.registrations.values.map(\.appId))
        for appId in apps.sorted() {
            let verdict = host.policy.posture(appId: appId, checks: checks)
            switch verdict.action {
            case .block, .wipe:
                guard let finding = verdict.deciding, blocked[appId] == nil else { continue }
                blocked[appId] = finding
                warned[appId] = nil
                restoredWhileLocked.remove(appId)
                if finding.action == .wipe { wipe(appId, finding) }
                revoke(appId, finding)
            case .warn, .ignore:
                if let finding = blocked.removeValue(forKey: appId) { restore(appId, finding) }
                if verdict.action == .warn {
                    warn(appId, verdict.warnings, when: "reading")
                } else {
                    warned[appId] = nil
                }
            }
        }
        for appId in Set(blocked.keys).union(warned.keys).subtracting(apps) {
            blocked[appId] = nil
            warned[appId] = nil
            restoredWhileLocked.remove(appId)
        }
    }

    /// A subscriber bound to `registration`: it hears the posture state it would have missed.
    func subscribed(_ registration: AppRegistration) {
        if let finding = blocked[registration.appId] {
            send(to: registration.appId, [finding.result], Self.revocation)
        } else if let warnings = warned[registration.appId] {
            send(to: registration.appId, warnings, CordonEvent.Payload.postureWarning)
        }
    }

    private func warn(_ appId: String, _ findings: [PostureFinding], when: String) {
        let results = findings.map(\.result)
        guard warned[appId] != results else { return }
        warned[appId] = results
        for finding in findings { audit(appId, "posture.warn", outcome: "warned", finding) }
        host.logger.warning(
            "device posture warning", metadata: ["appId": "\(appId)", "checks": "\(results.map(\.check.rawValue))"])
        send(to: appId, results, CordonEvent.Payload.postureWarning)
    }

    private func revoke(_ appId: String, _ finding: PostureFinding) {
        audit(appId, "posture.revoke", outcome: "revoked", finding)
        host.logger.warning(
            "device posture: the app's key is revoked", metadata: ["appId": "\(appId)", "reason": "\(finding.reason)"])
        send(to: appId, [finding.result], Self.revocation)
        host.appKeyRevokedForPosture(appId)
    }

    private func restore(_ appId: String, _ finding: PostureFinding) {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "posture", appId: appId, action: "posture.restore", outcome: "restored",
                reason: "conditions.\(finding.result.check.rawValue): the check no longer fails", rules: [])
        ])
        host.logger.notice("device posture: the app's key is given back", metadata: ["appId": "\(appId)"])
        if host.lifecycleState.keyAvailable {
            send(to: appId, [], Self.restoration)
            host.appKeyReturnedForPosture(appId)
        } else {
            restoredWhileLocked.insert(appId)
        }
    }

    /// The container's key is back: apps whose posture block was lifted meanwhile hear it with
    /// reason `posture` too (before the broadcast), so a supervisor that froze for the posture thaws.
    func keyReturned() {
        let apps = restoredWhileLocked
        restoredWhileLocked = []
        for appId in apps.sorted() where blocked[appId] == nil {
            send(to: appId, [], Self.restoration)
        }
    }

    private func wipe(_ appId: String, _ finding: PostureFinding) {
        audit(appId, "posture.wipe", outcome: "wiped", finding)
        host.wipeAppData(appId, reason: finding.reason)
    }

    /// The app's key is revoked for its posture (it acknowledges by the deadline its registry
    /// entry holds, not one on the event).
    private static func revocation(_ notice: CordonEvent.PostureNotice) -> CordonEvent.Payload {
        .encryptionKeyUnavailable(ackDeadline: nil, posture: notice)
    }

    /// The app's posture block is lifted.
    private static func restoration(_ notice: CordonEvent.PostureNotice) -> CordonEvent.Payload {
        .encryptionKeyAvailable(posture: notice)
    }

    /// Sends one event with reason `posture` to `appId`'s subscribers only (its seq is that of the
    /// latest broadcast): `payload` with the app and `results`.
    private func send(
        to appId: String, _ results: [PostureResult],
        _ payload: (CordonEvent.PostureNotice) -> CordonEvent.Payload
    ) {
        let event = CordonEvent(
            seq: host.lastSeq, payload: payload(CordonEvent.PostureNotice(appId: appId, results: results)),
            reason: .posture, time: host.clock(), state: host.lifecycleState)
        for registration in host.registry.registrations.values where registration.appId == appId {
            guard let id = registration.subscriber, let subscriber = host.subscriber(id) else { continue }
            let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
                SubscribeReply(event: event), continues: true)
            host.deliver(frame, to: subscriber)
        }
    }

    func audit(_ appId: String, _ action: String, outcome: String, _ finding: PostureFinding) {
        host.writeAudit([
            AuditEntry(
                time: host.clock(), category: "posture", appId: appId, action: action, outcome: outcome,
                reason: finding.reason, rules: finding.rules.map(\.description))
        ])
    }
}
