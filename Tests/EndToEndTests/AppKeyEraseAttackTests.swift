import CordonAppStorage
import CordonSecrets
import CordonStore
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "App storage" (issue #27, case 2): the user, who knows the passcode, wipes
/// one app's data, then as a same-user program deletes the app's key rows (`appKey`, and the
/// legacy `appGeneration`) with `sqlite3`, puts back a copy of the app's storage file and restarts
/// the agent: the record must not read back. The agent, the CLI and the attacker are one ordinary
/// user (``UserAgent``, outside test mode).
@Suite struct AppKeyEraseAttackTests {
    static let app = "com.example.notes"
    static let value = "wiped-marker-value-8841"
    static let trusted = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    static func storage(_ agent: UserAgent, _ command: [String]) async throws -> CommandResult {
        try await agent.cli(
            ["storage"] + command.prefix(1) + ["--app", app, "--passcode-stdin"] + command.dropFirst(),
            input: UserAgent.passcode + "\n")
    }

    /// Keeps a copy of the app's storage file and returns its wrapped key row (hex), as the user.
    static func stash(_ agent: UserAgent) async throws -> String {
        let answer = try await agent.attack(
            """
            import shutil, sqlite3
            data, stash, app = sys.argv[2], sys.argv[3], sys.argv[4]
            os.makedirs(stash, exist_ok=True)
            for suffix in ["", "-wal"]:
                source = data + "/storage/" + app + ".sqlite" + suffix
                if os.path.exists(source):
                    shutil.copy(source, stash + "/copy.sqlite" + suffix)
            db = sqlite3.connect(data + "/cordon.sqlite")
            row = db.execute("SELECT wrapped FROM appKey WHERE appId = ?", (app,)).fetchone()
            db.close()
            print(json.dumps({"wrapped": row[0].hex() if row else None}))
            """, [agent.home.appending("data"), agent.home.appending("stash"), app])
        return try #require(answer["wrapped"] as? String, "the app has a wrapped key row: \(answer)")
    }

    /// With the agent stopped: looks for `wrapped` in the database and its WAL, deletes every
    /// `appKey` and `appGeneration` row, and puts the copy of the storage file back.
    static func deleteRowsAndRestore(_ agent: UserAgent, wrapped: String) async throws -> [String: Any] {
        try await agent.attack(
            """
            import shutil, sqlite3
            data, stash, app, wrapped = sys.argv[2], sys.argv[3], sys.argv[4], bytes.fromhex(sys.argv[5])
            out = {"found": [f for f in ["", "-wal"]
                             if os.path.exists(data + "/cordon.sqlite" + f)
                             and wrapped in open(data + "/cordon.sqlite" + f, "rb").read()]}
            db = sqlite3.connect(data + "/cordon.sqlite")
            out["keys"] = [r[0] for r in db.execute("SELECT appId FROM appKey")]
            out["generations"] = [list(r) for r in db.execute("SELECT appId, generation FROM appGeneration")]
            db.execute("DELETE FROM appKey")
            db.execute("DELETE FROM appGeneration")
            db.commit()
            db.close()
            for suffix in ["", "-wal"]:
                target = data + "/storage/" + app + ".sqlite" + suffix
                if os.path.exists(stash + "/copy.sqlite" + suffix):
                    shutil.copy(stash + "/copy.sqlite" + suffix, target)
            out["restored"] = os.path.getsize(data + "/storage/" + app + ".sqlite")
            print(json.dumps(out))
            """, [agent.home.appending("data"), agent.home.appending("stash"), app, wrapped])
    }

    /// The attack, from a container whose app has `value` stored: wipe, row deletions, the file
    /// put back, a restart and an unlock; the record does not read back.
    static func wipeAndAttack(_ agent: UserAgent) async throws {
        let wrapped = try await stash(agent)
        let wipe = try await agent.cli(["wipe", "--app", app, "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(wipe.status == 0, "wipe: \(wipe.stderr)")
        agent.stop()
        let attack = try await deleteRowsAndRestore(agent, wrapped: wrapped)
        // The wipe deleted the wrapped key with secure_delete and truncated the WAL: no copy left.
        #expect((attack["found"] as? [String]) == [], "the wiped key's wrapped bytes are on disk: \(attack)")
        #expect((attack["keys"] as? [String])?.contains(app) == false, "\(attack)")
        #expect((attack["restored"] as? Int ?? 0) > 0, "\(attack)")
        try await agent.restart()
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
        // The record is in the file (usage counts rows without a key)...
        let usage = try await agent.cli(["storage", "usage", "--json"])
        #expect(usage.stdout.contains(app), "the restored file is there: \(usage.stdout)")
        // ...and the app's key now is a new random one: the record is not found, nothing is listed.
        let get = try await storage(agent, ["get", "draft"])
        #expect(get.status != 0)
        #expect(
            get.stderr.contains("cordon: error: no record named \"draft\" in namespace \"default\""),
            "\(get.stdout)\(get.stderr)")
        #expect(!get.stdout.contains(value))
        #expect(try await storage(agent, ["ls"]).stdout == "")
    }

    @Test func aWipedAppsRecordDoesNotReadBackAfterItsKeyRowsAreDeletedAndItsFileRestored() async throws {
        let agent = try await UserAgent(policy: Self.trusted)
        defer { agent.cleanUp() }
        let put = try await Self.storage(agent, ["put", "draft", Self.value])
        try #require(put.status == 0, "storage put: \(put.stderr)")
        #expect(try await Self.storage(agent, ["get", "draft"]).stdout == Self.value)
        try await Self.wipeAndAttack(agent)
    }

    /// A container made before random app keys: its master key wrapped as `cordon.keystore.v1`,
    /// a record of the app sealed under its derived key.
    static func makeOldContainer(_ home: TemporaryDirectory) throws {
        let data = home.appending("data")
        try FileManager.default.createDirectory(
            atPath: AppStorage.directory(dataDirectory: data), withIntermediateDirectories: true)
        let custody = KeyCustody()
        let master = custody.makeMasterKey()
        defer { master.zero() }
        let kdf = KDFParameters(rounds: 1 << 15, blockSize: 8, parallelism: 1, salt: custody.makeSalt())
        let wrapped = try custody.wrap(master, passcode: UserAgent.passcode, kdf: kdf, format: .derivedAppKeys)
        let database = try CordonDatabase(path: data + "/cordon.sqlite")
        try database.saveWrappedKey(wrapped, now: 1)
        try database.saveAttempts(count: 0, lastFailureAt: nil)
        let storage = AppStorage(
            path: AppStorage.path(dataDirectory: data, appId: app), appId: app,
            appKey: custody.legacyAppKey(master: master, appId: app))
        try storage.put(namespace: "default", name: "draft", value: Array(value.utf8))
        storage.close()
    }

    @Test func anOldContainerOpensWithItsRecordAndAWipeThenKeepsItGone() async throws {
        let agent = try await UserAgent(policy: Self.trusted, initialize: false, prepareHome: Self.makeOldContainer)
        defer { agent.cleanUp() }
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
        #expect(agent.log.contains("container migrated to random app keys"), "\(agent.log)")
        #expect(try await Self.storage(agent, ["get", "draft"]).stdout == Self.value)
        // The migration is stored: after a restart the record still reads (from the wrapped row).
        try await agent.restart()
        let again = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(again.status == 0, "unlock: \(again.stderr)")
        #expect(try await Self.storage(agent, ["get", "draft"]).stdout == Self.value)
        try await Self.wipeAndAttack(agent)
    }
}
