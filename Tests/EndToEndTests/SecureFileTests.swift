import Foundation
import Testing

/// `SecureFile`: the app's files in the age format, read by the real `age` CLI with the identity
/// `cordon storage export-identity` gives, and closed with the container (docs/THREAT-MODEL.md,
/// "Storage"). cordond, the CLI, `age` and the app — the `SecureFile` example (examples/files) —
/// run as an ordinary user outside test mode (``UserAgent``).
@Suite struct SecureFileTests {
    static let age = "/usr/bin/age"
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// Runs `age ARGUMENTS` as the user.
    static func age(_ arguments: [String]) async throws -> CommandResult {
        try await runCommand(
            URL(fileURLWithPath: UserAgent.asUser[0]), Array(UserAgent.asUser.dropFirst()) + [age] + arguments)
    }

    /// The agent, initialised and unlocked, and the app registered as the notes app.
    static func started() async throws -> (UserAgent, FilesApp) {
        let agent = try await UserAgent(policy: policy)
        do {
            return (agent, try await agent.startFiles())
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    @Test func theAgeCLIReadsTheAppsFilesAndTheAppReadsAgesFiles() async throws {
        let (agent, app) = try await Self.started()
        defer {
            app.stop()
            agent.cleanUp()
        }
        let appId = "com.example.notes"
        let note = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let source = agent.home.appending("note.in")
        try note.write(to: URL(fileURLWithPath: source))
        let path = agent.home.appending("note.age")
        app.send("write \(path) \(source)")
        try await app.waitFor("wrote \(path)")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The administrator's export, then the real age CLI.
        let export = try await agent.cli(
            ["storage", "export-identity", "--app", appId, "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(export.status == 0, "\(export.stderr)")
        let identityFile = agent.home.appending("notes.key")
        try export.stdout.write(toFile: identityFile, atomically: true, encoding: .utf8)
        let decrypted = agent.home.appending("note.plain")
        let ageRead = try await Self.age(["-d", "-i", identityFile, "-o", decrypted, path])
        #expect(ageRead.status == 0, "\(ageRead.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: decrypted)) == note)

        // age -r to the app's recipient: the app reads it.
        app.send("recipient")
        try await app.waitFor("recipient age1")
        let said = app.read().split(separator: "\n").first { $0.hasPrefix("[files] recipient ") }
        let recipient = String(try #require(said).dropFirst("[files] recipient ".count))
        #expect(export.stdout.contains("# public key: \(recipient)"))
        let plain = agent.home.appending("from-age.txt")
        try "written by age".write(toFile: plain, atomically: true, encoding: .utf8)
        let fromAge = agent.home.appending("from-age.age")
        let ageWrite = try await Self.age(["-r", recipient, "-o", fromAge, plain])
        #expect(ageWrite.status == 0, "\(ageWrite.stderr)")
        let read = agent.home.appending("from-age.out")
        app.send("read \(fromAge) \(read)")
        try await app.waitFor("read \(fromAge)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: read)) == Data("written by age".utf8))
        let audit = try await agent.cli(["audit", "--app", appId, "--json"])
        let actions = audit.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["action"] as? String
        }
        #expect(actions.contains("storage.export-identity"), "\(actions)")

        // A same-user program without the passcode gets no identity (and its guess counts).
        let attack = try await agent.attack(
            """
            s = connect(sys.argv[1])
            none = call(s, "io.cordon.Storage.ExportIdentity", {"appId": sys.argv[2]})
            wrong = call(s, "io.cordon.Storage.ExportIdentity", {"appId": sys.argv[2], "passcode": "0000"})
            print(json.dumps({"none": error(none), "wrong": error(wrong),
                              "leaked": "AGE-SECRET-KEY" in json.dumps(wrong)}))
            """, [appId])
        #expect(attack["none"] as? String == "org.varlink.service.InvalidParameter")
        #expect(attack["wrong"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(attack["leaked"] as? Bool == false)
        #expect(agent.terminate() == 0)
    }

    @Test func filesCloseWithTheContainerAndAWriteCutByARevocationLeavesNothing() async throws {
        let (agent, app) = try await Self.started()
        defer {
            app.stop()
            agent.cleanUp()
        }
        let appId = "com.example.notes"
        let passcode = UserAgent.passcode + "\n"
        let directory = agent.home.appending("files")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let kept = agent.home.appending("kept.in")
        try "kept".write(toFile: kept, atomically: true, encoding: .utf8)
        let path = directory + "/kept.age"
        let fifo = agent.home.appending("cut.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        try await agent.give(directory)
        try await agent.give(fifo)
        app.send("write \(path) \(kept)")
        try await app.waitFor("wrote \(path)")

        // A write streaming from a pipe when the key is revoked. The test holds the pipe open
        // for reading too, so neither end's open waits for the other.
        let writeEnd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        #expect(writeEnd >= 0)
        let chunk = [UInt8](repeating: 0x41, count: 100_000)
        let cut = directory + "/cut.age"
        app.send("stream \(cut) \(fifo)")
        _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, 65_536) }
        // The write is under way (its temporary file exists) before the key is revoked.
        try await eventually("the write started") {
            try FileManager.default.contentsOfDirectory(atPath: directory).contains { $0.hasPrefix("cut.age.") }
        }
        #expect(try await agent.cli(["logout"]).status == 0)
        // The app drops its key as it hears the revocation, before it says so.
        try await app.waitFor("event EncryptionKeyUnavailable")
        _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, 1000) }
        close(writeEnd)
        try await app.waitFor("stream \(cut) \(fifo): ")
        #expect(
            app.read().contains("[files] stream \(cut) \(fifo): the container is locked for \(appId)"),
            "a write went on after the key was revoked: \(app.read())")
        #expect(!app.read().contains("wrote \(cut)"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains { $0.hasPrefix("cut.age") }, "no file and no temporary left: \(names)")

        // Locked without a key: nothing reads, nothing writes.
        let out = agent.home.appending("kept.out")
        app.send("read \(path) \(out)")
        try await app.waitFor("read \(path) \(out): the container is locked for \(appId)")
        #expect(!FileManager.default.fileExists(atPath: out), "a file was read after a logout")
        let late = directory + "/late.age"
        app.send("write \(late) \(kept)")
        try await app.waitFor("write \(late) \(kept): the container is locked for \(appId)")
        #expect(!FileManager.default.fileExists(atPath: late), "a file was written after a logout")

        // Back: it reads again; after a selective wipe the old file opens with nothing.
        #expect(try await agent.cli(["unlock", "--passcode-stdin"], input: passcode).status == 0)
        app.send("read \(path) \(out)")
        try await app.waitFor("read \(path)\n")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "kept")
        let wiped = try await agent.cli(["wipe", "--app", appId, "--passcode-stdin"], input: passcode)
        #expect(wiped.status == 0, "\(wiped.stderr)")
        // The app drops its key as it hears the wipe, before it says so.
        try await app.waitFor("event Wiped")
        let again = agent.home.appending("wiped.out")
        app.send("read \(path) \(again)")
        try await app.waitFor("read \(path) \(again): ")
        #expect(
            app.read().contains("read \(path) \(again): no identity matched any of the stanzas (X25519)"),
            "a file of the wiped generation opened: \(app.read())")
        #expect(!FileManager.default.fileExists(atPath: again))
        #expect(agent.terminate() == 0)
    }
}
