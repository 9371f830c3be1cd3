import CordonStore
import Foundation
import Testing

/// The files behind the passcode are the user's alone, whatever they were before cordond
/// started, and a passcode change leaves no copy of the old wrapped key on disk. cordond and the
/// CLI run as an ordinary user (``UserAgent``); the other user is uid 65534.
@Suite struct PrivateFilesTests {
    /// `cat FILE` as uid 65534: its exit status and error output.
    static func readAsNobody(_ file: String) async throws -> CommandResult {
        try await runCommand(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/cat", file])
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static let policy = #"{"schema": "cordon.policy.v1"}"#

    @Test func directoriesAndDatabaseAreTightenedAtEveryStart() async throws {
        // Made beforehand with the usual umask, as `mkdir -p` or an installer would.
        let agent = try await UserAgent(policy: Self.policy) { home in
            for name in ["data", "config"] {
                try FileManager.default.createDirectory(
                    atPath: home.appending(name), withIntermediateDirectories: false,
                    attributes: [.posixPermissions: 0o755])
            }
        }
        defer { agent.cleanUp() }
        let home = agent.home
        let database = home.appending("data/cordon.sqlite")
        #expect(try Self.mode(home.appending("data")) == 0o700)
        #expect(try Self.mode(home.appending("config")) == 0o700)
        for file in CordonDatabase.files(of: database) where FileManager.default.fileExists(atPath: file) {
            #expect(try Self.mode(file) == 0o600, "\(file) is created private")
        }
        agent.stop()

        // Loosened while cordond was not running (by hand, a backup restore, an older version):
        // another user can read the wrapped key.
        chmod(home.path, 0o755)
        for directory in ["data", "config", "run"] { chmod(home.appending(directory), 0o755) }
        chmod(database, 0o644)
        let exposed = try await Self.readAsNobody(database)
        #expect(exposed.status == 0, "the attack works on loose files: \(exposed.stderr)")

        try await agent.restart()
        let refused = try await Self.readAsNobody(database)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Permission denied"), "\(refused.stderr)")
        for directory in ["data", "config", "run"] {
            #expect(try Self.mode(home.appending(directory)) == 0o700, "\(directory)")
            #expect(agent.log.contains("\(home.appending(directory)): 0755 -> 0700"), "\(directory) logged")
        }
        #expect(try Self.mode(database) == 0o600)
        #expect(agent.log.contains("\(database): 0644 -> 0600"))
        #expect(agent.log.contains("tightened a permission that let others in"))
    }

    @Test func aPasscodeChangeLeavesNoOldWrappedKeyInTheDatabaseOrItsLog() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let database = agent.home.appending("data/cordon.sqlite")
        // What a same-user program sees now: the record the old passcode unwraps.
        let old = try #require(try CordonDatabase(path: database, readOnly: true).loadWrappedKey())
        let new = "Otter-Basalt-9902"
        let changed = try await agent.cli(["passwd", "--passcode-stdin"], input: "\(UserAgent.passcode)\n\(new)\n")
        try #require(changed.status == 0, "passwd: \(changed.stderr)")
        for file in CordonDatabase.files(of: database) {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            #expect(bytes.range(of: Data(old.sealed)) == nil, "\(file) holds the old wrapped key")
            #expect(bytes.range(of: Data(old.kdf.salt)) == nil, "\(file) holds the old salt")
        }
        // The new record is the one in force (a restarted agent holds no key: the passcode decides).
        try await agent.restart()
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: new + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try await agent.cli(["status"]).stdout.contains("unlocked"))
    }
}
