import CordonKit
import CordonProtocol
import CordonStore
import Foundation
import Testing

/// The files behind the passcode are the user's alone, whatever they were before cordond
/// started, and a passcode change leaves no copy of the old wrapped key on disk.
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

    @Test func directoriesAndDatabaseAreTightenedAtEveryStart() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        chmod(root.path, 0o755)
        // Made beforehand with the usual umask, as `mkdir -p` or an installer would.
        for name in ["data", "config"] {
            try FileManager.default.createDirectory(
                atPath: root.appending(name), withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o755])
        }
        let first = try await DaemonProcess.started(root: root)
        defer { first.cleanUp() }
        let client = try await first.client()
        try await client.initialize(passcode: "2468")
        await client.close()
        let database = first.databasePath
        #expect(try Self.mode(root.appending("data")) == 0o700)
        #expect(try Self.mode(root.appending("config")) == 0o700)
        for file in CordonDatabase.files(of: database) where FileManager.default.fileExists(atPath: file) {
            #expect(try Self.mode(file) == 0o600, "\(file) is created private")
        }
        try await first.stop()

        // Loosened while cordond was not running (by hand, a backup restore, an older version):
        // another user can read the wrapped key.
        for directory in ["data", "config", "run"] { chmod(root.appending(directory), 0o755) }
        chmod(database, 0o644)
        let exposed = try await Self.readAsNobody(database)
        #expect(exposed.status == 0, "the attack works on loose files: \(exposed.stderr)")

        let second = try await DaemonProcess.started(root: root)
        defer { second.cleanUp() }
        let refused = try await Self.readAsNobody(database)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Permission denied"), "\(refused.stderr)")
        for directory in ["data", "config", "run"] {
            #expect(try Self.mode(root.appending(directory)) == 0o700, "\(directory)")
            #expect(second.log.contains("\(root.appending(directory)): 0755 -> 0700"), "\(directory) logged")
        }
        #expect(try Self.mode(database) == 0o600)
        #expect(second.log.contains("\(database): 0644 -> 0600"))
        #expect(second.log.contains("tightened a permission that let others in"))
        try await second.stop()
    }

    @Test func aPasscodeChangeLeavesNoOldWrappedKeyInTheDatabaseOrItsLog() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "old-2468")
        // What a same-user program sees now: the record the old passcode unwraps.
        let old = try #require(try CordonDatabase(path: daemon.databasePath, readOnly: true).loadWrappedKey())
        try await client.changePasscode(old: "old-2468", new: "new-1357")
        for file in CordonDatabase.files(of: daemon.databasePath) {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            #expect(bytes.range(of: Data(old.sealed)) == nil, "\(file) holds the old wrapped key")
            #expect(bytes.range(of: Data(old.kdf.salt)) == nil, "\(file) holds the old salt")
        }
        // The new record is the one in force.
        try await client.unlock(passcode: "new-1357")
        #expect(try await client.status().state == .unlocked)
        await client.close()
        try await daemon.stop()
    }
}
