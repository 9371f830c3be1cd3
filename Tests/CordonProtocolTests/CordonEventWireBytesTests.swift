import CordonProtocol
import Foundation
import PropertyBased
import Testing

/// A representative event of every kind (and of every combination of data a kind carries), with
/// the exact JSON the agent sends for it. The texts were captured from the struct of optional
/// members that `CordonEvent` was before its payload became a sum type: the wire must not change.
let eventWireSamples: [(name: String, event: CordonEvent, wire: String)] = [
    (
        "state",
        CordonEvent(seq: 3, payload: .state, reason: .startup, time: 1_700_000_000.25, state: .lockedKeyHeld),
        #"{"seq":3,"kind":"State","reason":"startup","time":1700000000.25,"state":"lockedKeyHeld"}"#
    ),
    (
        "keyAvailable",
        CordonEvent(
            seq: 4, payload: .encryptionKeyAvailable(), reason: .userRequest, time: 1_700_000_001, state: .lockedKeyHeld
        ),
        #"{"seq":4,"kind":"EncryptionKeyAvailable","reason":"userRequest","time":1700000001,"state":"lockedKeyHeld"}"#
    ),
    (
        "keyAvailable posture",
        CordonEvent(
            seq: 4,
            payload: .encryptionKeyAvailable(
                posture: CordonEvent.PostureNotice(appId: "com.example.notes", results: [])), reason: .posture,
            time: 1_700_000_001.5, state: .unlocked),
        #"{"seq":4,"kind":"EncryptionKeyAvailable","reason":"posture","time":1700000001.5,"state":"unlocked","appId":"com.example.notes","posture":[]}"#
    ),
    (
        "keyUnavailable",
        CordonEvent(
            seq: 7, payload: .encryptionKeyUnavailable(ackDeadline: 1_700_000_002.5), reason: .logout,
            time: 1_700_000_000.5, state: .lockedNoKey),
        #"{"seq":7,"kind":"EncryptionKeyUnavailable","reason":"logout","time":1700000000.5,"state":"lockedNoKey","ackDeadline":1700000002.5}"#
    ),
    (
        "keyUnavailable posture",
        CordonEvent(
            seq: 7,
            payload: .encryptionKeyUnavailable(
                ackDeadline: nil,
                posture: CordonEvent.PostureNotice(
                    appId: "com.example.notes",
                    results: [
                        PostureResult(.secureBoot, .fail, "SecureBoot-8be4df61: 0"),
                        PostureResult(.kernelLockdown, .unknown, ""),
                    ])), reason: .posture, time: 1_700_000_003, state: .unlocked),
        #"{"seq":7,"kind":"EncryptionKeyUnavailable","reason":"posture","time":1700000003,"state":"unlocked","appId":"com.example.notes","posture":[{"check":"secureBoot","status":"fail","evidence":"SecureBoot-8be4df61: 0"},{"check":"kernelLockdown","status":"unknown","evidence":""}]}"#
    ),
    (
        "keyUnavailable posture with deadline",
        CordonEvent(
            seq: 8,
            payload: .encryptionKeyUnavailable(
                ackDeadline: 1_700_000_006.125,
                posture: CordonEvent.PostureNotice(
                    appId: "com.example.notes",
                    results: [PostureResult(.diskEncryption, .fail, "/ on /dev/sda2: no dm-crypt")])), reason: .posture,
            time: 1_700_000_004, state: .unlocked),
        #"{"seq":8,"kind":"EncryptionKeyUnavailable","reason":"posture","time":1700000004,"state":"unlocked","ackDeadline":1700000006.125,"appId":"com.example.notes","posture":[{"check":"diskEncryption","status":"fail","evidence":"/ on /dev/sda2: no dm-crypt"}]}"#
    ),
    (
        "keyUnavailable agent gone",
        CordonEvent(
            seq: 9, payload: .encryptionKeyUnavailable(ackDeadline: nil), reason: .agentUnavailable,
            time: 1_700_000_005, state: .lockedNoKey),
        #"{"seq":9,"kind":"EncryptionKeyUnavailable","reason":"agentUnavailable","time":1700000005,"state":"lockedNoKey"}"#
    ),
    (
        "didLock",
        CordonEvent(seq: 10, payload: .didLock, reason: .screenLock, time: 1_700_000_006, state: .lockedKeyHeld),
        #"{"seq":10,"kind":"DidLock","reason":"screenLock","time":1700000006,"state":"lockedKeyHeld"}"#
    ),
    (
        "didUnlock",
        CordonEvent(seq: 11, payload: .didUnlock, reason: .userRequest, time: 10.5, state: .unlocked),
        #"{"seq":11,"kind":"DidUnlock","reason":"userRequest","time":10.5,"state":"unlocked"}"#
    ),
    (
        "wiped",
        CordonEvent(seq: 12, payload: .wiped(), reason: .maxAttempts, time: 1_700_000_007, state: .uninitialized),
        #"{"seq":12,"kind":"Wiped","reason":"maxAttempts","time":1700000007,"state":"uninitialized"}"#
    ),
    (
        "wiped one app",
        CordonEvent(
            seq: 12, payload: .wiped(appId: "com.example.notes"), reason: .policy, time: 1_700_000_008, state: .unlocked
        ),
        #"{"seq":12,"kind":"Wiped","reason":"policy","time":1700000008,"state":"unlocked","appId":"com.example.notes"}"#
    ),
    (
        "policyDidChange",
        CordonEvent(
            seq: 13, payload: .policyDidChange(policyVersion: "sha256:0123abcd"), reason: .policy, time: 1_700_000_009,
            state: .unlocked),
        #"{"seq":13,"kind":"PolicyDidChange","reason":"policy","time":1700000009,"state":"unlocked","policyVersion":"sha256:0123abcd"}"#
    ),
    (
        "appEnforced",
        CordonEvent(
            seq: 14, payload: .appEnforced(appId: "com.example.deaf", pid: 4242, enforcement: .freeze), reason: .policy,
            time: 1_700_000_010, state: .lockedNoKey),
        #"{"seq":14,"kind":"AppEnforced","reason":"policy","time":1700000010,"state":"lockedNoKey","appId":"com.example.deaf","pid":4242,"enforcement":"freeze"}"#
    ),
    (
        "openDocument",
        CordonEvent(
            seq: 14,
            payload: .openDocument(
                DocumentInfo(
                    path: "/home/u/Documents/report \"Q3\".pdf", contentType: "application/pdf",
                    sender: "com.example.mail",
                    id: "d-1")), reason: .userRequest, time: 1_700_000_011, state: .unlocked),
        #"{"seq":14,"kind":"OpenDocument","reason":"userRequest","time":1700000011,"state":"unlocked","document":{"path":"/home/u/Documents/report \"Q3\".pdf","contentType":"application/pdf","sender":"com.example.mail","id":"d-1"}}"#
    ),
    (
        "openDocument bare",
        CordonEvent(
            seq: 14, payload: .openDocument(DocumentInfo(path: "/tmp/x", contentType: nil, sender: "com.example.mail")),
            reason: .userRequest, time: 1_700_000_012, state: .unlocked),
        #"{"seq":14,"kind":"OpenDocument","reason":"userRequest","time":1700000012,"state":"unlocked","document":{"path":"/tmp/x","sender":"com.example.mail"}}"#
    ),
    (
        "postureWarning",
        CordonEvent(
            seq: 14,
            payload: .postureWarning(
                CordonEvent.PostureNotice(
                    appId: "com.example.notes",
                    results: [PostureResult(.ptraceScope, .fail, "kernel.yama.ptrace_scope = 0")])), reason: .posture,
            time: 1_700_000_013, state: .unlocked),
        #"{"seq":14,"kind":"PostureWarning","reason":"posture","time":1700000013,"state":"unlocked","appId":"com.example.notes","posture":[{"check":"ptraceScope","status":"fail","evidence":"kernel.yama.ptrace_scope = 0"}]}"#
    ),
    (
        "didSignOut",
        CordonEvent(
            seq: 15, payload: .didSignOut(provider: "entra"), reason: .userRequest, time: 1_700_000_014,
            state: .unlocked),
        #"{"seq":15,"kind":"DidSignOut","reason":"userRequest","time":1700000014,"state":"unlocked","provider":"entra"}"#
    ),
]

/// `CordonEvent`'s hand-written wire form: the same bytes as before, every kind both ways, and a
/// payload that does not fit its kind refused with the member named.
@Suite("CordonEvent wire form")
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

    @Test(arguments: eventWireSamples.map(\.name))
    func anEventDecodesFromItsBytes(name: String) throws {
        let sample = try #require(eventWireSamples.first { $0.name == name })
        #expect(try VarlinkJSONDecoder().decode(CordonEvent.self, from: Array(sample.wire.utf8)) == sample.event)
        #expect(try JSONDecoder().decode(CordonEvent.self, from: Data(sample.wire.utf8)) == sample.event)
        let frame = try VarlinkCodec().encodeBytes(
            VarlinkReply(parameters: SubscribeReply(event: sample.event), continues: true))
        #expect(try VarlinkCodec().decodeParameters(SubscribeReply.self, from: frame).event == sample.event)
    }

    @Test func randomEventsOfEveryKindRoundTrip() throws {
        var generator = Xoshiro(seed: (0xE7E7, 28, 11, 5))
        for _ in 0..<600 {
            let event = CordonEvent(
                seq: Int.random(in: 0...1_000_000, using: &generator),
                payload: .random(using: &generator),
                reason: pick(EventReason.allCases, using: &generator),
                time: Double.random(in: 0...2_000_000_000, using: &generator),
                state: pick(LifecycleState.allCases, using: &generator))
            let ours = try VarlinkJSONEncoder().encode(event)
            #expect(try VarlinkJSONDecoder().decode(CordonEvent.self, from: ours) == event)
            #expect(try JSONDecoder().decode(CordonEvent.self, from: JSONEncoder().encode(event)) == event)
        }
    }

    /// Member texts that do not fit their kind, and the member each error must name.
    static let misfits: [(json: String, member: String)] = [
        (
            #"{"seq":1,"kind":"DidLock","reason":"userRequest","time":1,"state":"lockedKeyHeld","policyVersion":"v"}"#,
            "policyVersion"
        ),
        (#"{"seq":1,"kind":"State","reason":"startup","time":1,"state":"unlocked","ackDeadline":3}"#, "ackDeadline"),
        (#"{"seq":1,"kind":"PolicyDidChange","reason":"policy","time":1,"state":"unlocked"}"#, "policyVersion"),
        (
            #"{"seq":1,"kind":"AppEnforced","reason":"policy","time":1,"state":"unlocked","appId":"a","enforcement":"freeze"}"#,
            "pid"
        ),
        (
            #"{"seq":1,"kind":"OpenDocument","reason":"userRequest","time":1,"state":"unlocked","provider":"p"}"#,
            "provider"
        ),
        (#"{"seq":1,"kind":"OpenDocument","reason":"userRequest","time":1,"state":"unlocked"}"#, "document"),
        (#"{"seq":1,"kind":"PostureWarning","reason":"posture","time":1,"state":"unlocked","appId":"a"}"#, "posture"),
        (
            #"{"seq":1,"kind":"EncryptionKeyAvailable","reason":"posture","time":1,"state":"unlocked","posture":[]}"#,
            "appId"
        ),
        (
            #"{"seq":1,"kind":"EncryptionKeyUnavailable","reason":"logout","time":1,"state":"lockedNoKey","pid":7}"#,
            "pid"
        ),
        (
            #"{"seq":1,"kind":"Wiped","reason":"policy","time":1,"state":"unlocked","enforcement":"thaw"}"#,
            "enforcement"
        ),
        (#"{"seq":1,"kind":"DidSignOut","reason":"userRequest","time":1,"state":"unlocked"}"#, "provider"),
        (
            #"{"seq":1,"kind":"DidSignOut","reason":"userRequest","time":1,"state":"unlocked","provider":"p","appId":"a"}"#,
            "appId"
        ),
    ]

    @Test(arguments: misfits.indices)
    func aPayloadThatDoesNotFitItsKindIsRefusedNamingTheMember(index: Int) throws {
        let misfit = Self.misfits[index]
        for error in [
            try #require(throws: DecodingError.self) {
                try VarlinkJSONDecoder().decode(CordonEvent.self, from: Array(misfit.json.utf8))
            },
            try #require(throws: DecodingError.self) {
                try JSONDecoder().decode(CordonEvent.self, from: Data(misfit.json.utf8))
            },
        ] {
            let (path, description) = Self.pathAndDescription(error)
            #expect(path.last?.stringValue == misfit.member, "\(misfit.json)")
            #expect(description.contains(misfit.member), "\(description)")
        }
    }

    @Test func aNullMemberIsAbsentAsForAnyOptional() throws {
        let text = #"{"seq":2,"kind":"DidUnlock","reason":"userRequest","time":1,"state":"unlocked","appId":null}"#
        let event = try VarlinkJSONDecoder().decode(CordonEvent.self, from: Array(text.utf8))
        #expect(event == CordonEvent(seq: 2, payload: .didUnlock, reason: .userRequest, time: 1, state: .unlocked))
    }

    private static func pathAndDescription(_ error: DecodingError) -> ([any CodingKey], String) {
        switch error {
        case .keyNotFound(let key, let context): (context.codingPath + [key], context.debugDescription)
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
            (context.codingPath, context.debugDescription)
        @unknown default: ([], "")
        }
    }
}

extension CordonEvent.Payload {
    /// A random payload of a random kind.
    static func random(using generator: inout Xoshiro) -> Self {
        func text() -> String { JSONValue.randomString(using: &generator) }
        func notice() -> CordonEvent.PostureNotice {
            let results = (0..<Int.random(in: 0..<3, using: &generator)).map { _ in
                PostureResult(
                    pick(PostureCheck.allCases, using: &generator),
                    pick([PostureStatus.pass, .fail, .unknown], using: &generator), text())
            }
            return CordonEvent.PostureNotice(appId: text(), results: results)
        }
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &generator) ? make() : nil }
        switch pick(EventKind.allCases, using: &generator) {
        case .state: return .state
        case .encryptionKeyAvailable: return .encryptionKeyAvailable(posture: maybe(notice))
        case .encryptionKeyUnavailable:
            return .encryptionKeyUnavailable(
                ackDeadline: maybe { Double.random(in: 0...2_000_000_000, using: &generator) }, posture: maybe(notice))
        case .didLock: return .didLock
        case .didUnlock: return .didUnlock
        case .wiped: return .wiped(appId: maybe(text))
        case .policyDidChange: return .policyDidChange(policyVersion: text())
        case .appEnforced:
            return .appEnforced(
                appId: text(), pid: Int.random(in: 1...4_194_304, using: &generator),
                enforcement: pick(EnforcementAction.allCases, using: &generator))
        case .openDocument:
            return .openDocument(
                DocumentInfo(path: text(), contentType: maybe(text), sender: text(), id: maybe(text)))
        case .postureWarning: return .postureWarning(notice())
        case .didSignOut: return .didSignOut(provider: text())
        }
    }
}

/// One of `values`, at random (none may be empty).
private func pick<T>(_ values: [T], using generator: inout Xoshiro) -> T {
    values[Int.random(in: values.indices, using: &generator)]
}
