import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon events`: the state snapshot, and with `--follow` every event after it.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the current state, and with --follow every lifecycle event, one per line.",
        discussion: """
            Each line: time (UTC), seq, kind, reason, state, the acknowledgement deadline if any, and for \
            PolicyDidChange the new policy version, for AppEnforced the app, its pid and the action (freeze, \
            terminate, disconnect, report, thaw). With --json, one JSON object per line with the keys \
            ackDeadline, kind, reason, seq, state and time (Unix seconds), plus policyVersion, appId, pid and \
            enforcement when set. \
            With --follow the command runs until cordond closes the stream (exit 0) or it is interrupted.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Keep printing events until the stream ends.")
    var follow = false

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let events = try await client.events()
        do {
            for try await event in events {
                try Output.line(try render(event))
                if !follow { break }
            }
        } catch CordonClientError.connectionClosed where follow {
            Output.note("cordon: cordond closed the event stream")
        }
        await client.close()
    }

    /// The state as users read it (`locked`, with whether the key is held), never the protocol's
    /// name (`lockedKeyHeld`: `--json` keeps that).
    static func stateFields(_ state: LifecycleState) -> [String] {
        switch state {
        case .uninitialized: ["state=not-set-up"]
        case .unlocked: ["state=unlocked"]
        case .lockedKeyHeld: ["state=locked", "key=held"]
        case .lockedNoKey: ["state=locked", "key=none"]
        }
    }

    /// One line for `event`.
    func render(_ event: CordonEvent) throws -> String {
        let record = EventRecord(event)
        if json { return try Output.json(record, compact: true) }
        var fields =
            [
                Format.time(event.date), "seq=\(event.seq)", event.kind.rawValue, "reason=\(event.reason.rawValue)",
            ] + Self.stateFields(event.state)
        if let deadline = event.ackDeadlineDate { fields.append("ackDeadline=\(Format.time(deadline))") }
        if let version = record.policyVersion { fields.append("policyVersion=\(version)") }
        if let appId = record.appId { fields.append("app=\(appId)") }
        if let pid = record.pid { fields.append("pid=\(pid)") }
        if let enforcement = record.enforcement { fields.append("enforcement=\(enforcement.rawValue)") }
        if let provider = record.provider { fields.append("provider=\(provider)") }
        return fields.joined(separator: " ")
    }
}

/// An event as `cordon events --json` prints it; `ackDeadline` is `null` when there is none.
struct EventRecord: Encodable {
    var kind: EventKind
    var reason: EventReason
    var seq: Int
    /// Unix seconds.
    var time: Double
    var state: LifecycleState
    /// Unix seconds.
    var ackDeadline: Double?
    /// For `PolicyDidChange`: the policy version now in force; the key is left out when absent.
    var policyVersion: String?
    /// For `AppEnforced`: the app, its process and what the agent did (the app also for a `Wiped`
    /// of one app and the posture events); left out when absent.
    var appId: String?
    var pid: Int?
    var enforcement: EnforcementAction?
    /// For `DidSignOut`: the identity provider; left out when absent.
    var provider: String?

    init(_ event: CordonEvent) {
        let members = event.payload.members
        provider = members.provider
        appId = members.appId
        pid = members.pid
        enforcement = members.enforcement
        policyVersion = members.policyVersion
        kind = event.kind
        reason = event.reason
        seq = event.seq
        time = event.time
        state = event.state
        ackDeadline = event.ackDeadline
    }

    private enum CodingKeys: String, CodingKey {
        case kind, reason, seq, time, state, ackDeadline, policyVersion, appId, pid, enforcement, provider
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(reason, forKey: .reason)
        try container.encode(seq, forKey: .seq)
        try container.encode(time, forKey: .time)
        try container.encode(state, forKey: .state)
        try container.encode(ackDeadline, forKey: .ackDeadline)
        try container.encodeIfPresent(policyVersion, forKey: .policyVersion)
        try container.encodeIfPresent(appId, forKey: .appId)
        try container.encodeIfPresent(pid, forKey: .pid)
        try container.encodeIfPresent(enforcement, forKey: .enforcement)
        try container.encodeIfPresent(provider, forKey: .provider)
    }
}
