import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSystem
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// `EnforcementComponent` against a fake host and a real child process: what `lock.onAckTimeout`
/// does to an app that missed its acknowledgement deadline — the process frozen and thawed, or
/// terminated, through its pidfd; connections closed; or only reported — and that each step is
/// recorded in the registry, audited with its rule and announced as `AppEnforced`
/// (docs/ARCHITECTURE.md, "Freezing").
@Suite struct EnforcementComponentTests {
    typealias Fixture = ComponentFixture<EnforcementComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)
    static let rule = "/etc/cordon/policy.d/test.json#/lock/onAckTimeout"

    static func with(_ action: AckTimeoutAction, _ body: (Fixture) async throws -> Void) async throws {
        try await Fixture.with(
            documents: [(PolicyDocument(PolicyKeys.Lock.onAckTimeout(action)), admin)],
            make: { EnforcementComponent(host: $0) }, body)
    }

    /// A child `sleep` standing in for an app, with a pidfd for it. Spawned with no signal
    /// blocked or ignored (a thread of the test runner blocks most of them, and a child inherits
    /// that), so it acts on SIGTERM as an app would; reaped here.
    final class Child: @unchecked Sendable {
        let pid: Int32
        let pidfd: Pidfd
        private var status: Int32?

        init() throws {
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            var all = sigset_t()
            sigfillset(&all)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            // Only the standard descriptors: a pipe another test opened at the same moment (a
            // peer's stdin, whose end-of-file stops it) must not stay open in this child for its
            // thousand seconds.
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            try SpawnDescriptors.closeAllButStandard(&actions)
            let words: [String] = ["/bin/sleep", "1000"]
            let arguments = words.map { strdup($0) }
            defer { arguments.forEach { free($0) } }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, "/bin/sleep", &actions, &attributes, arguments + [nil], environ)
            guard result == 0 else { throw SystemError(operation: "posix_spawn", errno: result) }
            self.pid = pid
            pidfd = try #require(Pidfd(pid: pid))
        }

        var state: ProcessRunState { ProcessInfoReader.runState(of: pid) }

        /// Waits until it has exited and reaps it: its wait status.
        @discardableResult
        func reap() -> Int32 {
            if let status { return status }
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
            status = raw
            return raw
        }

        /// The signal that ended it, once reaped (nil when it exited).
        var terminatingSignal: Int32? {
            guard let status, status & 0x7f != 0 else { return nil }
            return status & 0x7f
        }

        /// Kills it through its pidfd (never a recycled pid) and reaps it.
        func stop() {
            if status == nil { try? pidfd.send(signal: SIGKILL) }
            reap()
        }
    }

    /// Registers `child` as `com.example.notes` on connection 1 and has enforcement track it.
    static func track(_ child: Child, in fixture: Fixture) async throws -> AppRegistration {
        try await fixture.run { host, enforcement, _ throws in
            let registration = AppRegistration(
                connection: 1, appId: "com.example.notes", pid: Int(child.pid), executable: "/bin/sleep",
                managed: true, token: "t")
            try host.register(registration)
            enforcement.track(
                1, appId: "com.example.notes", process: child.pidfd, pid: child.pid, onBehalf: false,
                registrar: getpid())
            return registration
        }
    }

    /// Enforces on `app` and returns the input announcing it (`AppEnforced`, after the step).
    static func enforce(_ app: AppRegistration, in fixture: Fixture) async throws -> LifecycleInput {
        try await fixture.run { host, enforcement, _ in
            let next = host.nextInput()
            enforcement.enforce(app, why: "no acknowledgement by the deadline")
            return next
        }.get()
    }

    @Test func aFrozenAppIsStoppedUntilTheKeyReturns() async throws {
        let child = try Child()
        defer { child.stop() }
        try await Self.with(.freeze) { fixture in
            let app = try await Self.track(child, in: fixture)
            let announced = try await Self.enforce(app, in: fixture)
            #expect(
                announced
                    == .appEnforced(appId: "com.example.notes", pid: Int(child.pid), action: .freeze, now: 1_000_000))
            try await eventually("pid \(child.pid) is stopped") { child.state == .stopped }
            let (recorded, compliance, audit) = try await fixture.run { host, _, _ in
                (
                    host.enforcements.map { $0.1 }, host.registry.registrations[1]?.compliance,
                    host.audit.map { [$0.action, $0.outcome, $0.rules.first] as [String?] }
                )
            }
            #expect(recorded == [.freeze])
            #expect(compliance == .frozen)
            #expect(audit == [["ack.freeze", "freeze", Self.rule]])

            let thawed = try await fixture.run { host, enforcement, _ in
                let next = host.nextInput()
                enforcement.thaw([app])
                return next
            }.get()
            #expect(
                thawed == .appEnforced(appId: "com.example.notes", pid: Int(child.pid), action: .thaw, now: 1_000_000))
            try await eventually("pid \(child.pid) runs again") { child.state != .stopped }
            #expect(
                try await fixture.run { host, _, _ in host.audit.last.map { [$0.action, $0.outcome] as [String?] } }
                    == ["ack.thaw", "thaw"])
        }
    }

    @Test func aTerminatedAppGetsSIGTERM() async throws {
        let child = try Child()
        defer { child.stop() }
        try await Self.with(.terminate) { fixture in
            let app = try await Self.track(child, in: fixture)
            let announced = try await Self.enforce(app, in: fixture)
            #expect(
                announced
                    == .appEnforced(appId: "com.example.notes", pid: Int(child.pid), action: .terminate, now: 1_000_000)
            )
            try await eventually("pid \(child.pid) exits") { child.pidfd.hasExited }
            child.reap()
            #expect(child.terminatingSignal == SIGTERM)
            let (recorded, audit) = try await fixture.run { host, _, _ in
                (
                    host.enforcements.map { $0.1 },
                    host.audit.map { [$0.action, $0.outcome, $0.rules.first] as [String?] }
                )
            }
            #expect(recorded == [.terminate])
            #expect(audit == [["ack.terminate", "terminate", Self.rule]])
        }
    }

    @Test func anAppThatExitedCannotBeFrozenAndTheFailureIsAudited() async throws {
        let child = try Child()
        try await Self.with(.freeze) { fixture in
            let app = try await Self.track(child, in: fixture)
            child.stop()
            _ = try await Self.enforce(app, in: fixture)
            let (recorded, audit) = try await fixture.run { host, _, _ in
                (host.enforcements.count, host.audit.first)
            }
            // Nothing was done to it, so nothing is recorded as done.
            #expect(recorded == 0)
            #expect(audit?.action == "ack.freeze")
            #expect(audit?.outcome == "failed")
        }
    }

    @Test func disconnectClosesTheAppsConnectionsAndReportOnlyAudits() async throws {
        try await Self.with(.disconnect) { fixture in
            var app = AppRegistration(
                connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes", managed: true,
                token: "t")
            app.subscriber = 2
            let announced = try await Self.enforce(app, in: fixture)
            #expect(
                announced == .appEnforced(appId: "com.example.notes", pid: 101, action: .disconnect, now: 1_000_000))
            let (closed, recorded) = try await fixture.run { host, _, _ in (host.closed, host.enforcements.map { $0.1 })
            }
            #expect(closed == [1, 2])
            #expect(recorded == [.disconnect])
        }
        try await Self.with(.report) { fixture in
            let app = AppRegistration(
                connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes", managed: true,
                token: "t")
            _ = try await Self.enforce(app, in: fixture)
            let (closed, recorded, audit) = try await fixture.run { host, _, _ in
                (
                    host.closed, host.enforcements.map { $0.1 },
                    host.audit.map { [$0.action, $0.outcome, $0.rules.first] as [String?] }
                )
            }
            #expect(closed.isEmpty)
            #expect(recorded == [.report])
            #expect(audit == [["ack.report", "report", Self.rule]])
        }
    }
}
