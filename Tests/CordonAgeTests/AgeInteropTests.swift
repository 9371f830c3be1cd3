import Foundation
import Testing

@testable import CordonAge

/// Interoperability with the real `age` CLI (Debian package `age`, installed by
/// scripts/install-deps.sh): files CordonAge writes open with `age -d`, files `age` writes open
/// with CordonAge, binary and armored, X25519 and scrypt. The passphrase is typed into age's
/// terminal through `script` (util-linux), since age reads it only from a TTY.
@Suite("CordonAge: interop with the age CLI", .enabled(if: AgeCLI.path != nil, "the age CLI is not installed"))
struct AgeInteropTests {
    static var agePath: String? { AgeCLI.path }
    static let sizes = [0, 1, 65_536, 65_537, 3 * 1024 * 1024 + 5]

    /// Runs `arguments` with `input` on stdin; returns the exit status and stderr.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: String = "") throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

    /// Streams `source` through `AgeFile.encrypt` into `target`.
    static func encryptFile(_ source: URL, _ target: URL, recipients: [any AgeRecipient], armor: Bool) throws {
        let input = try FileHandle(forReadingFrom: source)
        _ = FileManager.default.createFile(atPath: target.path, contents: nil)
        let output = try FileHandle(forWritingTo: target)
        defer {
            try? input.close()
            try? output.close()
        }
        try AgeFile.encrypt(
            from: input.fileDescriptor, to: output.fileDescriptor, recipients: recipients, armor: armor)
    }

    /// Streams `source` through `AgeFile.decrypt`; the plaintext, or the error.
    static func decryptFile(_ source: URL, identities: [any AgeIdentity]) throws -> [UInt8] {
        let target = source.appendingPathExtension("out")
        let input = try FileHandle(forReadingFrom: source)
        _ = FileManager.default.createFile(atPath: target.path, contents: nil)
        let output = try FileHandle(forWritingTo: target)
        defer {
            try? input.close()
            try? output.close()
        }
        try AgeFile.decrypt(from: input.fileDescriptor, to: output.fileDescriptor, identities: identities)
        return Array(try Data(contentsOf: target))
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test(arguments: sizes, [false, true])
    func cordonWritesAgeReads(size: Int, armor: Bool) throws {
        let age = try #require(Self.agePath)
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plaintext = AgeTestSupport.bytes(size, seed: UInt64(size) + 3)
        let identity = AgeX25519Identity.generate()
        let key = folder.appendingPathComponent("key.txt")
        try Data((identity.encoded + "\n").utf8).write(to: key)
        try Data(plaintext).write(to: folder.appendingPathComponent("plain"))
        try Self.encryptFile(
            folder.appendingPathComponent("plain"), folder.appendingPathComponent("file.age"),
            recipients: [identity.recipient], armor: armor)
        let out = folder.appendingPathComponent("decrypted")
        let (status, message) = try Self.run(
            age, ["-d", "-i", key.path, "-o", out.path, folder.appendingPathComponent("file.age").path])
        #expect(status == 0, "age -d: \(message)")
        // age creates its output file at the first plaintext byte: none for an empty payload.
        let decrypted =
            size == 0 && !FileManager.default.fileExists(atPath: out.path) ? Data() : try Data(contentsOf: out)
        #expect(Array(decrypted) == plaintext)
    }

    @Test(arguments: sizes, [false, true])
    func ageWritesCordonReads(size: Int, armor: Bool) throws {
        let age = try #require(Self.agePath)
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plaintext = AgeTestSupport.bytes(size, seed: UInt64(size) + 5)
        let identity = AgeX25519Identity.generate()
        let plain = folder.appendingPathComponent("plain")
        try Data(plaintext).write(to: plain)
        let file = folder.appendingPathComponent("file.age")
        let (status, message) = try Self.run(
            age, ["-r", identity.recipient.encoded] + (armor ? ["-a"] : []) + ["-o", file.path, plain.path])
        #expect(status == 0, "age -r: \(message)")
        #expect(try Self.decryptFile(file, identities: [identity]) == plaintext)
        // And the wrong identity is refused by name.
        #expect(throws: AgeError.noIdentityMatched(stanzaTypes: ["X25519"])) {
            try Self.decryptFile(file, identities: [AgeX25519Identity.generate()])
        }
    }

    @Test func scryptBothWays() throws {
        let age = try #require(Self.agePath)
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plaintext = AgeTestSupport.bytes(70_000, seed: 11)
        let plain = folder.appendingPathComponent("plain")
        try Data(plaintext).write(to: plain)

        // CordonAge → age -d, the passphrase typed at age's terminal.
        let ours = folder.appendingPathComponent("ours.age")
        try Self.encryptFile(
            plain, ours, recipients: [try AgeScryptRecipient(passphrase: "correct horse", workFactor: 14)], armor: false
        )
        let out = folder.appendingPathComponent("ours.out")
        let (status, message) = try Self.run(
            "/usr/bin/script", ["-qec", "\(age) -d -o \(out.path) \(ours.path)", "/dev/null"],
            input: "correct horse\n")
        #expect(status == 0, "age -d (scrypt): \(message)")
        #expect(Array(try Data(contentsOf: out)) == plaintext)

        // age -p → CordonAge (age asks twice).
        let theirs = folder.appendingPathComponent("theirs.age")
        let (encryptStatus, encryptMessage) = try Self.run(
            "/usr/bin/script", ["-qec", "\(age) -p -o \(theirs.path) \(plain.path)", "/dev/null"],
            input: "correct horse\ncorrect horse\n")
        #expect(encryptStatus == 0, "age -p: \(encryptMessage)")
        #expect(
            try Self.decryptFile(theirs, identities: [try AgeScryptIdentity(passphrase: "correct horse")]) == plaintext)
    }
}

/// Where the `age` CLI is, if installed.
enum AgeCLI {
    static let path: String? = ["/usr/bin/age", "/usr/local/bin/age"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}
