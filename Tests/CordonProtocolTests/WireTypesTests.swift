import CordonProtocol
import Foundation
import Testing

@Suite("Wire types")
struct WireTypesTests {
    @Test func wireEventEncodesWithWireNames() throws {
        let event = CordonEvent(
            seq: 7, payload: .encryptionKeyUnavailable(ackDeadline: 1_700_000_002.5), reason: .logout,
            time: 1_700_000_000.5, state: .lockedNoKey)
        #expect(
            try parse(JSONEncoder().encode(event))
                == .object([
                    "seq": .int(7), "kind": .string("EncryptionKeyUnavailable"), "reason": .string("logout"),
                    "time": .double(1_700_000_000.5), "state": .string("lockedNoKey"),
                    "ackDeadline": .double(1_700_000_002.5),
                ]))
    }

    @Test func wireEventOmitsAnAbsentDeadline() throws {
        let event = CordonEvent(seq: 1, payload: .didUnlock, reason: .userRequest, time: 10.5, state: .unlocked)
        #expect(try jsonKeys(event) == ["seq", "kind", "reason", "time", "state"])
        #expect(try JSONDecoder().decode(CordonEvent.self, from: JSONEncoder().encode(event)) == event)
    }

    @Test func wireEventDecodesFromAnotherClient() throws {
        let text = #"{"seq":3,"kind":"State","reason":"startup","time":12,"state":"lockedKeyHeld"}"#
        let event = try JSONDecoder().decode(CordonEvent.self, from: json(text))
        #expect(event == CordonEvent(seq: 3, payload: .state, reason: .startup, time: 12, state: .lockedKeyHeld))
        #expect(event.keyAvailable)
    }

    @Test func unknownEventKindsFailToDecode() {
        let text = #"{"seq":3,"kind":"Exploded","reason":"startup","time":12,"state":"unlocked"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CordonEvent.self, from: json(text)) }
    }

    @Test func statesKnowWhetherTheyAreLockedAndHoldTheKey() {
        #expect(LifecycleState.allCases.filter(\.isLocked) == [.uninitialized, .lockedNoKey, .lockedKeyHeld])
        #expect(LifecycleState.allCases.filter(\.keyAvailable) == [.unlocked, .lockedKeyHeld])
        for state in LifecycleState.allCases {
            #expect(
                CordonEvent(seq: 0, payload: .state, reason: .startup, time: 0, state: state).keyAvailable
                    == state.keyAvailable)
        }
    }

    @Test func rawValuesAreTheWireVocabulary() {
        #expect(
            LifecycleState.allCases.map(\.rawValue) == ["uninitialized", "lockedNoKey", "unlocked", "lockedKeyHeld"])
        #expect(
            EventKind.allCases.map(\.rawValue) == [
                "State", "EncryptionKeyAvailable", "EncryptionKeyUnavailable", "DidLock", "DidUnlock", "Wiped",
                "PolicyDidChange", "AppEnforced", "OpenDocument", "PostureWarning", "DidSignOut",
            ])
        #expect(
            EventReason.allCases.map(\.rawValue) == [
                "userRequest", "idleTimeout", "screenLock", "suspend", "logout", "maxAttempts", "policy", "wipe",
                "shutdown", "startup", "posture", "agentUnavailable",
            ])
        #expect(AcknowledgeStatus.allCases.map(\.rawValue) == ["halted", "handled"])
        #expect(
            Compliance.allCases.map(\.rawValue) == [
                "compliant", "pending", "overdue", "unmanaged", "frozen", "terminated",
            ])
    }

    @Test func statusRoundTrips() throws {
        let status = AgentStatus(
            state: .unlocked, seq: 12, failedAttempts: 1, maxAttempts: 10, retryAfterSeconds: 0.5,
            idleTimeoutSeconds: 300, reauthGraceSeconds: 60, ackDeadlineMs: 2000, apps: 3, version: "0.1.0",
            insecureKDF: true)
        let data = try JSONEncoder().encode(StatusReply(status: status))
        #expect(try JSONDecoder().decode(StatusReply.self, from: data).status == status)
    }

    @Test func appInfoRoundTripsWithAndWithoutOptionals() throws {
        let pending = AppInfo(
            appId: "com.example.notes", pid: 12, executable: "/usr/bin/notes", managed: true, subscribed: true,
            compliance: .pending, pendingSeq: 4, lastAckSeq: 2)
        let idle = AppInfo(
            appId: "com.example.viewer", pid: 13, executable: "/usr/bin/viewer", managed: false, subscribed: false,
            compliance: .unmanaged, pendingSeq: nil, lastAckSeq: nil)
        let frozen = AppInfo(
            appId: "com.example.deaf", pid: 14, executable: "/usr/bin/deaf", managed: true, subscribed: true,
            compliance: .frozen, pendingSeq: 5, lastAckSeq: nil, freezeMethod: .cgroup, processState: .frozen,
            cgroup: "/cordon-com.example.deaf-13", resumesUndone: 1)
        let data = try JSONEncoder().encode(ListAppsReply(apps: [pending, idle, frozen]))
        #expect(try JSONDecoder().decode(ListAppsReply.self, from: data).apps == [pending, idle, frozen])
        #expect(!(try jsonKeys(idle)).contains("pendingSeq"))
        #expect(!(try jsonKeys(idle)).contains("freezeMethod"))
    }

    @Test func serviceInfoRoundTrips() throws {
        let info = ServiceInfo(
            vendor: "Cordon", product: "cordond", version: InterfaceDescriptions.version, url: "https://example.org",
            interfaces: InterfaceDescriptions.names)
        #expect(try JSONDecoder().decode(ServiceInfo.self, from: JSONEncoder().encode(info)) == info)
    }
}
