import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct RuntimeDirectoryTests {
    let root = "/tmp/cordon-sys-" + UUID().uuidString.prefix(8).lowercased()

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func createsAndTightensTheDirectory() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/run/cordon"
        try RuntimeDirectory.prepare(directory, uid: getuid())
        #expect(try mode(directory) == 0o700)
        chmod(directory, 0o755)
        try RuntimeDirectory.prepare(directory, uid: getuid())
        #expect(try mode(directory) == 0o700)
    }

    @Test func privateDirectoriesAreTightenedAndTheChangeReported() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/data"
        #expect(try PrivateDirectory.enforce(directory, uid: getuid()) == nil, "created 0700: nothing tightened")
        #expect(try mode(directory) == 0o700)
        chmod(directory, 0o755)
        let change = try PrivateDirectory.enforce(directory, uid: getuid())
        #expect(change == PermissionChange(path: directory, from: 0o755, to: 0o700))
        #expect(change?.description == "\(directory): 0755 -> 0700")
        #expect(try mode(directory) == 0o700)
        #expect(try PrivateDirectory.enforce(directory, uid: getuid()) == nil)
        let file = root + "/file"
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        #expect(throws: RuntimeDirectoryError.notADirectory(file)) { try PrivateDirectory.enforce(file, uid: getuid()) }
    }

    @Test func refusesAnotherOwnersDirectory() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        #expect(throws: RuntimeDirectoryError.wrongOwner(root, owner: getuid())) {
            try RuntimeDirectory.prepare(root, uid: getuid() &+ 1)
        }
    }

    @Test func refusesAFileWhereTheSocketGoes() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/agent.sock"
        _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
        #expect(throws: RuntimeDirectoryError.notASocket(path)) { try RuntimeDirectory.claimSocketPath(path) }
        #expect(FileManager.default.fileExists(atPath: path), "a regular file is never deleted")
    }

    @Test func missingPathIsFree() throws {
        try RuntimeDirectory.claimSocketPath(root + "/nothing.sock")
    }

    @Test func hardeningMakesTheProcessNonDumpable() throws {
        try ProcessHardening.disableDumping()
        #expect(!ProcessHardening.isDumpable)
    }

    @Test func processStateOfARunningProcess() {
        let state = ProcessInfoReader.state(of: getpid())
        #expect(state == "R" || state == "S")
        #expect(ProcessInfoReader.state(of: 0x3fff_ffff) == nil)
    }
}
