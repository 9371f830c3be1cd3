import CordonAge
import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// `SecureFile`: the app's files in the age format, read by the real `age` CLI with the identity
/// `cordon storage export-identity` gives, and closed with the container (docs/THREAT-MODEL.md,
/// "Storage").
@Suite struct SecureFileTests {
    static let age = URL(fileURLWithPath: "/usr/bin/age")

    /// A daemon, initialised and unlocked, and the notes app registered.
    static func started() async throws -> (DaemonProcess, CordonClient, CordonApp) {
        let daemon = try await DaemonProcess.started()
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        return (daemon, client, app)
    }

    @Test func theAgeCLIReadsTheAppsFilesAndTheAppReadsAgesFiles() async throws {
        let (daemon, client, app) = try await Self.started()
        defer { daemon.cleanUp() }
        let files = SecureFile(app: app)
        let note = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let path = daemon.root.appending("note.age")
        try await files.write(note, to: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The administrator's export, then the real age CLI.
        let export = try await runCommand(
            Binaries.cordon,
            ["--socket", daemon.socketPath, "storage", "export-identity", "--app", app.appId, "--passcode-stdin"],
            input: "2468\n")
        #expect(export.status == 0, "\(export.stderr)")
        let identityFile = daemon.root.appending("notes.key")
        try export.stdout.write(toFile: identityFile, atomically: true, encoding: .utf8)
        let decrypted = daemon.root.appending("note.plain")
        let ageRead = try await runCommand(Self.age, ["-d", "-i", identityFile, "-o", decrypted, path])
        #expect(ageRead.status == 0, "\(ageRead.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: decrypted)) == note)

        // age -r to the app's recipient: the app reads it.
        let recipient = try await files.recipient()
        #expect(export.stdout.contains("# public key: \(recipient)"))
        let plain = daemon.root.appending("from-age.txt")
        try "written by age".write(toFile: plain, atomically: true, encoding: .utf8)
        let fromAge = daemon.root.appending("from-age.age")
        let ageWrite = try await runCommand(Self.age, ["-r", recipient, "-o", fromAge, plain])
        #expect(ageWrite.status == 0, "\(ageWrite.stderr)")
        #expect(try await files.read(fromAge) == Data("written by age".utf8))
        let audit = try await client.audit(appId: app.appId).compactMap(\.action)
        #expect(audit.contains("storage.export-identity"))

        // A same-user program without the passcode gets no identity (and its guess counts).
        let attack = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            none = call(s, "io.cordon.Storage.ExportIdentity", {"appId": sys.argv[2]})
            wrong = call(s, "io.cordon.Storage.ExportIdentity", {"appId": sys.argv[2], "passcode": "0000"})
            print(json.dumps({"none": error(none), "wrong": error(wrong),
                              "leaked": "AGE-SECRET-KEY" in json.dumps(wrong)}))
            """, [daemon.socketPath, app.appId], in: daemon.root)
        #expect(attack["none"] as? String == "org.varlink.service.InvalidParameter")
        #expect(attack["wrong"] as? String == "io.cordon.Agent.WrongPasscode")
        #expect(attack["leaked"] as? Bool == false)
        await app.close()
        await client.close()
        try await daemon.stop()
    }

    @Test func filesCloseWithTheContainerAndAWriteCutByARevocationLeavesNothing() async throws {
        let (daemon, client, app) = try await Self.started()
        defer { daemon.cleanUp() }
        let files = SecureFile(app: app)
        let path = daemon.root.appending("kept.age")
        try await files.write(Data("kept".utf8), to: path)

        // A write streaming from a pipe when the key is revoked.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let chunk = [UInt8](repeating: 0x41, count: 100_000)
        let cut = daemon.root.appending("cut.age")
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // The test never blocks on the pipe: a reader that stopped would hold it forever.
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        let writer = Task { try await files.write(from: readEnd, to: cut) }
        _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, 65_536) }
        // The write is under way (its temporary file exists) before the key is revoked.
        try await eventually("the write started") {
            try FileManager.default.contentsOfDirectory(atPath: daemon.root.path).contains { $0.hasPrefix("cut.age.") }
        }
        try await client.logout()
        try await eventually("the app dropped its key") { app.keyState.epoch > 0 && app.keyState.key == nil }
        _ = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, 1000) }
        close(writeEnd)
        do {
            try await writer.value
            Issue.record("a write went on after the key was revoked")
        } catch CordonError.containerLocked(let appId, _) {
            #expect(appId == app.appId)
        }
        close(readEnd)
        let names = try FileManager.default.contentsOfDirectory(atPath: daemon.root.path)
        #expect(!names.contains { $0.hasPrefix("cut.age") }, "no file and no temporary left: \(names)")

        // Locked without a key: nothing reads, nothing writes.
        do {
            _ = try await files.read(path)
            Issue.record("a file was read after a logout")
        } catch CordonError.containerLocked {}
        do {
            try await files.write(Data("late".utf8), to: daemon.root.appending("late.age"))
            Issue.record("a file was written after a logout")
        } catch CordonError.containerLocked {}
        #expect(!FileManager.default.fileExists(atPath: daemon.root.appending("late.age")))

        // Back: it reads again; after a selective wipe the old file opens with nothing.
        try await client.unlock(passcode: "2468")
        #expect(try await files.read(path) == Data("kept".utf8))
        try await client.wipeApp(app.appId, passcode: "2468")
        try await eventually("the app dropped its key after Wiped") { app.keyState.key == nil }
        do {
            _ = try await files.read(path)
            Issue.record("a file of the wiped generation opened")
        } catch let error as AgeError {
            #expect(error == .noIdentityMatched(stanzaTypes: ["X25519"]), "\(error)")
        }
        await app.close()
        await client.close()
        try await daemon.stop()
    }
}
