import CordonLifecycle
import CordonProtocol
import CordonSystem
import Foundation
import Testing

@testable import CordonServer

/// `ReportChannelCuts`: each reported cut is an audit record of the registered app (never of an
/// app the caller names), bad parameters are refused by their JSON pointer, and a connection that
/// registered nothing records nothing.
@Suite struct AppRegistrationsChannelCutsTests {
    static func cuts(_ pairs: [(String, String)]) -> [String: JSONValue] {
        [
            "cuts": .array(
                pairs.map { .object(["host": .string($0.0), "reason": .string($0.1)]) })
        ]
    }

    /// Registers connection 1 as `com.example.mail`, this test process.
    static func register(_ fixture: AppRegistrationsTests.Fixture) async throws {
        try await fixture.run { _, apps, _ throws in
            try apps.registry.register(
                AppRegistration(
                    connection: 1, appId: "com.example.mail", pid: Int(getpid()), executable: "/usr/bin/mail",
                    managed: true, token: "t"))
            let own = PeerIdentity(pid: getpid(), uid: getuid(), gid: getgid(), executable: "/usr/bin/mail")
            apps.processes[1] = AppProcess(
                identity: own, pidfd: Pidfd(pid: getpid()), onBehalf: false, fingerprint: nil, directory: nil)
        }
    }

    @Test func eachCutIsAnAuditRecordOfTheRegisteredApp() async throws {
        try await AppRegistrationsTests.with { fixture in
            try await Self.register(fixture)
            let reply = try await fixture.call(
                .reportChannelCuts,
                Self.cuts([
                    ("api.example.com", "pin-sha256 not in /etc/cordon/policy.d/10-net.json#/network/pins/0"),
                    ("mail.example.com", "unpinned hosts are denied"),
                ])
            ) { try $0.serveReportChannelCuts($1) }
            #expect(reply["error"] == nil, "\(reply)")
            let audit = try await fixture.run { host, _, _ in host.audit }
            #expect(audit.count == 2)
            #expect(audit.allSatisfy { $0.appId == "com.example.mail" && $0.action == "network.cut" })
            #expect(audit.allSatisfy { $0.category == .enforcement && $0.outcome == "cut" })
            #expect(audit.first?.reason.contains("api.example.com") == true)
            #expect(audit.first?.reason.contains("10-net.json#/network/pins/0") == true)
        }
    }

    @Test(arguments: [
        ([(String, String)](), "cuts"),
        ([("", "why")], "cuts/0/host"),
        ([("a.example", "why"), ("b.example", "")], "cuts/1/reason"),
        ([("a.example", String(repeating: "x", count: 1025))], "cuts/0/reason"),
        ([(String(repeating: "h", count: 254), "why")], "cuts/0/host"),
    ])
    func aBadCutIsRefusedByItsPointerAndNothingIsRecorded(cuts: [(String, String)], parameter: String) async throws {
        try await AppRegistrationsTests.with { fixture in
            try await Self.register(fixture)
            let reply = try await fixture.call(.reportChannelCuts, Self.cuts(cuts)) {
                try $0.serveReportChannelCuts($1)
            }
            #expect(reply["error"] == .string("org.varlink.service.InvalidParameter"))
            #expect(reply["parameters"]?["parameter"] == .string(parameter))
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
    }

    @Test func tooManyCutsInOneCallAreRefused() async throws {
        try await AppRegistrationsTests.with { fixture in
            try await Self.register(fixture)
            let many = Array(repeating: ("a.example", "why"), count: ReportChannelCutsParameters.maxCuts + 1)
            let reply = try await fixture.call(.reportChannelCuts, Self.cuts(many)) {
                try $0.serveReportChannelCuts($1)
            }
            #expect(reply["parameters"]?["parameter"] == .string("cuts"))
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
    }

    @Test func aConnectionWithoutARegistrationRecordsNothing() async throws {
        try await AppRegistrationsTests.with { fixture in
            let reply = try await fixture.call(.reportChannelCuts, Self.cuts([("a.example", "why")])) {
                try $0.serveReportChannelCuts($1)
            }
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
            #expect(try await fixture.run { host, _, _ in host.audit.isEmpty })
        }
    }
}
