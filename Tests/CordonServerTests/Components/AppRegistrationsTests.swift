import CordonLifecycle
import CordonPolicy
import CordonPosture
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import CordonServer

/// `AppRegistrations` against a fake host and its hooks: the calls that act for a registration
/// refuse a connection that has none (docs/ARCHITECTURE.md, "App identity").
@Suite struct AppRegistrationsTests {
    typealias Fixture = ComponentFixture<AppRegistrations>

    static func with(_ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            make: { base in
                let host = FakeRegistrationHost(base)
                base.retained.append(host)
                return AppRegistrations(host: host)
            }, body)
    }

    @Test(arguments: [Method.getKey, .reportActivity, .getNetworkPolicy])
    func aConnectionWithoutARegistrationIsRefused(method: Method) async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(method) { apps, call in
                switch method {
                case .getKey: try apps.serveGetKey(call)
                case .reportActivity: try apps.serveReportActivity(call)
                default: try apps.serveNetworkPolicy(call)
                }
            }
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
            // Nothing reached the lifecycle: no activity counted for an unregistered caller.
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }

    @Test func anAcknowledgementOfAnEventNeverSentIsRefused() async throws {
        try await Self.with { fixture in
            try await fixture.run { _, apps, _ throws in
                try apps.registry.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "t"))
            }
            let reply = try await fixture.call(.acknowledge, ["seq": .int(99), "status": .string("halted")]) {
                try $0.serveAcknowledge($1)
            }
            #expect(reply["error"] != nil)
        }
    }

    @Test func aGoneConnectionIsForgottenOnce() async throws {
        try await Self.with { fixture in
            let forgotten = try await fixture.run { _, apps, _ throws in
                try apps.registry.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "t"))
                return [apps.forget(1), apps.forget(1), apps.registry.registrations.isEmpty]
            }
            #expect(forgotten == [true, false, true])
        }
    }
}

/// The fake host with registration's hooks into posture, enforcement and connections, recorded.
final class FakeRegistrationHost: ForwardingHost, PolicyProvider, AuditSink, KeySource, RegistrationHooks {
    var policy: PolicyEvaluator { base.policy }
    func policyApplied() { base.policyApplied() }
    func writeAudit(_ records: [AuditEntry], onDisk: Bool) -> EventLoopFuture<Void> {
        base.writeAudit(records, onDisk: onDisk)
    }
    func auditStored() -> EventLoopFuture<Void> { base.auditStored() }
    func auditAfterReply(_ records: [AuditEntry]) -> EventLoopFuture<Void>? { base.auditAfterReply(records) }
    func appKey(for appId: String) -> SecureBytes? { base.appKey(for: appId) }
    func destroyingAppKey(_ appId: String) {}
    func appKeyDestroyed(_ appId: String, failed: Bool) {}
    func purposeKey(_ purpose: [String]) -> SecureBytes? { base.purposeKey(purpose) }

    private(set) var registered: [AppRegistration] = []
    private(set) var timerRearmed = 0
    func postureReading(for appId: String) -> EventLoopFuture<[PostureResult]> { loop.makeSucceededFuture([]) }
    func admitPosture(_ appId: String, checks: [PostureResult]) throws(CordonError) {}
    func checkPostureNotBlocked(_ appId: String) throws(CordonError) {}
    func connection(_ id: ConnectionID) -> AgentConnection? { nil }
    func appRegistered(_ registration: AppRegistration, process: AppProcess) { registered.append(registration) }
    func registeredAppsChanged() {}
    func holdSupervisorFreeze(_ app: AppRegistration) {}
    func thaw(_ apps: [AppRegistration]) {}
    func rescheduleTimer() { timerRearmed += 1 }
}
