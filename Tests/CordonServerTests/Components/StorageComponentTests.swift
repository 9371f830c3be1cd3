import CordonAppStorage
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// `StorageComponent` against a fake host: a verified registration's records put, read, listed
/// and deleted in its real encrypted file, closed while locked under `storage.dataAccess`
/// `whenUnlocked`, and an administrator's call naming an app only after the lifecycle machine
/// checked the passcode (docs/ARCHITECTURE.md, "Storage").
@Suite struct StorageComponentTests {
    typealias Fixture = ComponentFixture<StorageComponent>

    static let admin = PolicySource(path: "/etc/cordon/policy.d/test.json", origin: .admin)
    static let secret = "meeting at noon with the board"
    static var encoded: String { Data(secret.utf8).base64EncodedString() }

    /// Connection 1 is the managed `com.example.notes`.
    static func with(
        _ document: PolicyDocument = PolicyDocument(), _ body: (Fixture) async throws -> Void
    ) async throws {
        try await Fixture.with(
            documents: [(document, admin)],
            configure: { host in
                try? host.register(
                    AppRegistration(
                        connection: 1, appId: "com.example.notes", pid: 101, executable: "/usr/bin/notes",
                        managed: true, token: "a"))
            }, make: { StorageComponent(host: $0) }, body)
    }

    static func put(_ name: String, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.storagePut, ["name": .string(name), "value": .string(encoded)]) {
            try $0.serve(.put, $1)
        }
    }

    static func get(_ name: String, in fixture: Fixture) async throws -> JSONValue {
        try await fixture.call(.storageGet, ["name": .string(name)]) { try $0.serve(.get, $1) }
    }

    @Test func aRegisteredAppsRecordsArePutReadListedAndDeleted() async throws {
        try await Self.with { fixture in
            #expect(try await Self.put("agenda", in: fixture)["error"] == nil)
            #expect(try await Self.put("agenda-old", in: fixture)["error"] == nil)
            #expect(try await Self.get("agenda", in: fixture)["parameters"]?["value"] == .string(Self.encoded))
            let listed = try await fixture.call(.storageList, ["prefix": .string("agenda")]) {
                try $0.serve(.list, $1)
            }
            #expect(listed["parameters"]?["names"] == .array([.string("agenda"), .string("agenda-old")]))
            let deleted = try await fixture.call(.storageDelete, ["name": .string("agenda-old")]) {
                try $0.serve(.delete, $1)
            }
            #expect(deleted["parameters"]?["deleted"] == .bool(true))
            let gone = try await Self.get("agenda-old", in: fixture)
            #expect(gone["error"] == .string("io.cordon.Storage.NotFound"))

            // In the app's own file, sealed: another storage opened with the app's key reads the
            // record, and its plaintext is nowhere in the files.
            let (path, read) = try await fixture.run { host, storage, _ throws -> (String, String?) in
                storage.close { _ in true }
                let path = AppStorage.path(
                    dataDirectory: host.configuration.paths.dataDirectory, appId: "com.example.notes")
                let key = try #require(host.appKey(for: "com.example.notes"))
                let reopened = AppStorage(path: path, appId: "com.example.notes", appKey: key)
                defer { reopened.close() }
                let value = try reopened.withValue(namespace: AppStorage.defaultNamespace, name: "agenda") {
                    String(decoding: $0, as: UTF8.self)
                }
                return (path, value)
            }
            #expect(read == Self.secret)
            for file in [path, path + "-wal"] {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                #expect(bytes.range(of: Data(Self.secret.utf8)) == nil)
            }
        }
    }

    @Test func anUnregisteredCallerReachesNoRecords() async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(.storageGet, ["name": .string("agenda")], from: 2) {
                try $0.serve(.get, $1)
            }
            #expect(reply["error"] == .string("io.cordon.App.NotRegistered"))
        }
    }

    @Test func whenUnlockedDataIsClosedWhileLocked() async throws {
        let document = PolicyDocument(PolicyKeys.Storage.dataAccess(.whenUnlocked))
        try await Self.with(document) { fixture in
            _ = try await Self.put("agenda", in: fixture)
            try await fixture.run { host, storage, _ in
                host.lifecycleState = .lockedKeyHeld
                storage.observe(
                    CordonEvent(seq: 2, payload: .didLock, reason: .userRequest, time: 0, state: .lockedKeyHeld))
            }
            let reply = try await Self.get("agenda", in: fixture)
            #expect(reply["error"] == .string("io.cordon.Storage.ContainerLocked"))
            #expect(reply["parameters"]?["appId"] == .string("com.example.notes"))
            #expect(reply["parameters"]?["state"] == .string("lockedKeyHeld"))
            #expect(try await fixture.run { _, storage, _ in storage.open.isEmpty })
        }
    }

    @Test func afterFirstUnlockDataStaysOpenWhileTheKeyIsHeld() async throws {
        try await Self.with(PolicyDocument(PolicyKeys.Storage.dataAccess(.afterFirstUnlock))) { fixture in
            _ = try await Self.put("agenda", in: fixture)
            try await fixture.run { host, _, _ in host.lifecycleState = .lockedKeyHeld }
            #expect(try await Self.get("agenda", in: fixture)["parameters"]?["value"] == .string(Self.encoded))
            try await fixture.run { host, _, _ in host.lifecycleState = .lockedNoKey }
            #expect(try await Self.get("agenda", in: fixture)["error"] == .string("io.cordon.Storage.ContainerLocked"))
        }
    }

    @Test func anAdministratorsCallNamingAnAppNeedsThePasscode() async throws {
        try await Self.with { fixture in
            let parameters: [String: JSONValue] = [
                "appId": .string("com.example.notes"), "name": .string("agenda"), "value": .string(Self.encoded),
            ]
            let refused = try await fixture.call(.storagePut, parameters, from: 2) { try $0.serve(.put, $1) }
            #expect(refused["error"] == .string("io.cordon.Agent.PasscodeRequired"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })

            var withPasscode = parameters
            withPasscode["passcode"] = .string("2468")
            // A wrong passcode: the machine's refusal is the answer, and nothing is stored.
            let wrong = try await fixture.callAuthorized(
                .storagePut, withPasscode, from: 2, answer: .wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)
            ) {
                try $0.serve(.put, $1)
            }
            #expect(wrong.input == .authorizeRequested(hasPasscode: true, now: 1_000_000))
            #expect(wrong.reply["error"] == .string("io.cordon.Agent.WrongPasscode"))
            #expect(try await Self.get("agenda", in: fixture)["error"] == .string("io.cordon.Storage.NotFound"))

            let (input, reply) = try await fixture.callAuthorized(.storagePut, withPasscode, from: 2) {
                try $0.serve(.put, $1)
            }
            #expect(input == .authorizeRequested(hasPasscode: true, now: 1_000_000))
            #expect(reply["error"] == nil)
            let passcodes = try await fixture.run { host, _, _ in host.requests.map(\.passcode) }
            #expect(passcodes == ["2468", "2468"])
            // The app reads what the administrator put, and the administrator's call is audited.
            #expect(try await Self.get("agenda", in: fixture)["parameters"]?["value"] == .string(Self.encoded))
            let audit = try await fixture.run { host, _, _ in
                host.audit.map { [$0.appId, $0.action, $0.outcome] as [String?] }
            }
            #expect(audit == [["com.example.notes", "storage.put", "allow"]])
        }
    }

    @Test func anAppIdNoAppCouldHaveIsRefusedBeforeThePasscode() async throws {
        try await Self.with { fixture in
            let reply = try await fixture.call(
                .storageGet, ["appId": .string("../etc"), "name": .string("x"), "passcode": .string("2468")]
            ) { try $0.serve(.get, $1) }
            #expect(reply["error"] == .string("io.cordon.App.InvalidAppId"))
            #expect(try await fixture.run { host, _, _ in host.inputs.isEmpty })
        }
    }
}
