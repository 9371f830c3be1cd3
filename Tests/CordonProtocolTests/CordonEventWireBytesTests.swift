import CordonProtocol
import Foundation
import Testing

/// A representative event of every kind (and of every combination of data a kind carries), with
/// the exact JSON the agent sends for it, captured from the struct of optional members
/// `CordonEvent` is before its payload becomes a sum type (issue 28): the wire must not change.
let eventWireSamples: [(name: String, event: CordonEvent, wire: String)] = [
    (
        "state",
        CordonEvent(seq: 3, kind: .state, reason: .startup, time: 1_700_000_000.25, state: .lockedKeyHeld),
        #"{"seq":3,"kind":"State","reason":"startup","time":1700000000.25,"state":"lockedKeyHeld"}"#
    ),
    (
        "keyAvailable",
        CordonEvent(
            seq: 4, kind: .encryptionKeyAvailable, reason: .userRequest, time: 1_700_000_001, state: .lockedKeyHeld),
        #"{"seq":4,"kind":"EncryptionKeyAvailable","reason":"userRequest","time":1700000001,"state":"lockedKeyHeld"}"#
    ),
    (
        "keyAvailable posture",
        CordonEvent(
            seq: 4, kind: .encryptionKeyAvailable, reason: .posture, time: 1_700_000_001.5, state: .unlocked,
            appId: "com.example.notes", posture: []),
        #"{"seq":4,"kind":"EncryptionKeyAvailable","reason":"posture","time":1700000001.5,"state":"unlocked","appId":"com.example.notes","posture":[]}"#
    ),
    (
        "keyUnavailable",
        CordonEvent(
            seq: 7, kind: .encryptionKeyUnavailable, reason: .logout, time: 1_700_000_000.5, state: .lockedNoKey,
            ackDeadline: 1_700_000_002.5),
        #"{"seq":7,"kind":"EncryptionKeyUnavailable","reason":"logout","time":1700000000.5,"state":"lockedNoKey","ackDeadline":1700000002.5}"#
    ),
    (
        "keyUnavailable posture",
        CordonEvent(
            seq: 7, kind: .encryptionKeyUnavailable, reason: .posture, time: 1_700_000_003, state: .unlocked,
            appId: "com.example.notes",
            posture: [
                PostureResult(.secureBoot, .fail, "SecureBoot-8be4df61: 0"),
                PostureResult(.kernelLockdown, .unknown, ""),
            ]),
        #"{"seq":7,"kind":"EncryptionKeyUnavailable","reason":"posture","time":1700000003,"state":"unlocked","appId":"com.example.notes","posture":[{"check":"secureBoot","status":"fail","evidence":"SecureBoot-8be4df61: 0"},{"check":"kernelLockdown","status":"unknown","evidence":""}]}"#
    ),
    (
        "keyUnavailable posture with deadline",
        CordonEvent(
            seq: 8, kind: .encryptionKeyUnavailable, reason: .posture, time: 1_700_000_004, state: .unlocked,
            ackDeadline: 1_700_000_006.125, appId: "com.example.notes",
            posture: [PostureResult(.diskEncryption, .fail, "/ on /dev/sda2: no dm-crypt")]),
        #"{"seq":8,"kind":"EncryptionKeyUnavailable","reason":"posture","time":1700000004,"state":"unlocked","ackDeadline":1700000006.125,"appId":"com.example.notes","posture":[{"check":"diskEncryption","status":"fail","evidence":"/ on /dev/sda2: no dm-crypt"}]}"#
    ),
    (
        "keyUnavailable agent gone",
        CordonEvent(
            seq: 9, kind: .encryptionKeyUnavailable, reason: .agentUnavailable, time: 1_700_000_005, state: .lockedNoKey
        ),
        #"{"seq":9,"kind":"EncryptionKeyUnavailable","reason":"agentUnavailable","time":1700000005,"state":"lockedNoKey"}"#
    ),
    (
        "didLock",
        CordonEvent(seq: 10, kind: .didLock, reason: .screenLock, time: 1_700_000_006, state: .lockedKeyHeld),
        #"{"seq":10,"kind":"DidLock","reason":"screenLock","time":1700000006,"state":"lockedKeyHeld"}"#
    ),
    (
        "didUnlock",
        CordonEvent(seq: 11, kind: .didUnlock, reason: .userRequest, time: 10.5, state: .unlocked),
        #"{"seq":11,"kind":"DidUnlock","reason":"userRequest","time":10.5,"state":"unlocked"}"#
    ),
    (
        "wiped",
        CordonEvent(seq: 12, kind: .wiped, reason: .maxAttempts, time: 1_700_000_007, state: .uninitialized),
        #"{"seq":12,"kind":"Wiped","reason":"maxAttempts","time":1700000007,"state":"uninitialized"}"#
    ),
    (
        "wiped one app",
        CordonEvent(
            seq: 12, kind: .wiped, reason: .policy, time: 1_700_000_008, state: .unlocked, appId: "com.example.notes"),
        #"{"seq":12,"kind":"Wiped","reason":"policy","time":1700000008,"state":"unlocked","appId":"com.example.notes"}"#
    ),
    (
        "policyDidChange",
        CordonEvent(
            seq: 13, kind: .policyDidChange, reason: .policy, time: 1_700_000_009, state: .unlocked,
            policyVersion: "sha256:0123abcd"),
        #"{"seq":13,"kind":"PolicyDidChange","reason":"policy","time":1700000009,"state":"unlocked","policyVersion":"sha256:0123abcd"}"#
    ),
    (
        "appEnforced",
        CordonEvent(
            seq: 14, kind: .appEnforced, reason: .policy, time: 1_700_000_010, state: .lockedNoKey,
            appId: "com.example.deaf", pid: 4242, enforcement: .freeze),
        #"{"seq":14,"kind":"AppEnforced","reason":"policy","time":1700000010,"state":"lockedNoKey","appId":"com.example.deaf","pid":4242,"enforcement":"freeze"}"#
    ),
    (
        "openDocument",
        CordonEvent(
            seq: 14, kind: .openDocument, reason: .userRequest, time: 1_700_000_011, state: .unlocked,
            document: DocumentInfo(
                path: "/home/u/Documents/report \"Q3\".pdf", contentType: "application/pdf", sender: "com.example.mail",
                id: "d-1")),
        #"{"seq":14,"kind":"OpenDocument","reason":"userRequest","time":1700000011,"state":"unlocked","document":{"path":"/home/u/Documents/report \"Q3\".pdf","contentType":"application/pdf","sender":"com.example.mail","id":"d-1"}}"#
    ),
    (
        "openDocument bare",
        CordonEvent(
            seq: 14, kind: .openDocument, reason: .userRequest, time: 1_700_000_012, state: .unlocked,
            document: DocumentInfo(path: "/tmp/x", contentType: nil, sender: "com.example.mail")),
        #"{"seq":14,"kind":"OpenDocument","reason":"userRequest","time":1700000012,"state":"unlocked","document":{"path":"/tmp/x","sender":"com.example.mail"}}"#
    ),
    (
        "postureWarning",
        CordonEvent(
            seq: 14, kind: .postureWarning, reason: .posture, time: 1_700_000_013, state: .unlocked,
            appId: "com.example.notes", posture: [PostureResult(.ptraceScope, .fail, "kernel.yama.ptrace_scope = 0")]),
        #"{"seq":14,"kind":"PostureWarning","reason":"posture","time":1700000013,"state":"unlocked","appId":"com.example.notes","posture":[{"check":"ptraceScope","status":"fail","evidence":"kernel.yama.ptrace_scope = 0"}]}"#
    ),
    (
        "didSignOut",
        CordonEvent(
            seq: 15, kind: .didSignOut, reason: .userRequest, time: 1_700_000_014, state: .unlocked,
            provider: "entra"),
        #"{"seq":15,"kind":"DidSignOut","reason":"userRequest","time":1700000014,"state":"unlocked","provider":"entra"}"#
    ),
]

/// The bytes of every kind of event on the wire, as captured.
@Suite("CordonEvent wire bytes")
struct CordonEventWireTests {
    @Test func theSamplesCoverEveryKind() {
        #expect(Set(eventWireSamples.map(\.event.kind)) == Set(EventKind.allCases))
    }

    @Test(arguments: eventWireSamples.map(\.name))
    func anEventEncodesToTheBytesTheAgentAlwaysSent(name: String) throws {
        let sample = try #require(eventWireSamples.first { $0.name == name })
        #expect(String(decoding: try VarlinkJSONEncoder().encode(sample.event), as: UTF8.self) == sample.wire)
        let frame = try VarlinkCodec().encodeBytes(
            VarlinkReply(parameters: SubscribeReply(event: sample.event), continues: true))
        #expect(
            String(decoding: frame, as: UTF8.self) == #"{"parameters":{"event":"# + sample.wire
                + #"},"continues":true}"#)
    }
}
