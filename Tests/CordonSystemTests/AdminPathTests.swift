import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `AdminPath`: an admin input opened component by component, no link followed, `/proc` refused,
/// each component root's and writable by no one else, then read through the descriptor held.
/// The tests run as root (they make root's files), as the suites do.
@Suite struct AdminPathTests {
    let root = "/tmp/cordon-admin-path-" + UUID().uuidString.prefix(8).lowercased()

    init() throws {
        try FileManager.default.createDirectory(atPath: root + "/policy.d", withIntermediateDirectories: true)
        chmod(root, 0o755)
        chmod(root + "/policy.d", 0o755)
        try "{}".write(toFile: root + "/policy.d/10-a.json", atomically: true, encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    func refusal(_ path: String, kind: AdminPath.Kind = .directory) -> AdminPathError? {
        do {
            _ = try AdminPath.open(path, kind: kind)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRootDirectoryIsOpenedAndReadThroughItsDescriptor() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test makes root's files")
        let opened = try AdminPath.open(root + "/policy.d", kind: .directory)
        #expect(opened.isComplete)
        #expect(try opened.entries() == ["10-a.json"])
        #expect(try opened.read("10-a.json", limit: 100) == Array("{}".utf8))
        // `/proc/self/fd/N` of the descriptor leads to it (what inotify and the Flatpak check use).
        let resolved = try #require(realpath(opened.descriptorPath, nil))
        #expect(String(cString: resolved) == root + "/policy.d")
        free(resolved)
        // The name is retargeted (the directory moved, another put in its place): reads still
        // go to the directory that was opened.
        try FileManager.default.moveItem(atPath: root + "/policy.d", toPath: root + "/moved")
        try FileManager.default.createDirectory(atPath: root + "/policy.d", withIntermediateDirectories: true)
        try "{\"other\": 1}".write(toFile: root + "/policy.d/99-b.json", atomically: true, encoding: .utf8)
        #expect(try opened.entries() == ["10-a.json"])
        #expect(try opened.read("10-a.json", limit: 100) == Array("{}".utf8))
    }

    @Test func aSymbolicLinkComponentIsRefusedByName() throws {
        defer { remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/policy.d")
        let error = try #require(refusal(root + "/link"))
        #expect(error == AdminPathError(component: "link", reason: .symbolicLink))
        #expect(error.description == "component 'link' is a symbolic link")
        // A link in the middle of the path too.
        try FileManager.default.createSymbolicLink(atPath: root + "/up", withDestinationPath: root)
        #expect(refusal(root + "/up/policy.d") == AdminPathError(component: "up", reason: .symbolicLink))
        // And the link as the file named.
        try FileManager.default.createSymbolicLink(
            atPath: root + "/settings.json", withDestinationPath: root + "/policy.d/10-a.json")
        #expect(
            refusal(root + "/settings.json", kind: .file)
                == AdminPathError(component: "settings.json", reason: .symbolicLink))
    }

    @Test func parentComponentsAndRelativePathsAreRefused() throws {
        defer { remove() }
        #expect(refusal(root + "/policy.d/../policy.d") == AdminPathError(component: "..", reason: .parentComponent))
        #expect(refusal("policy.d") == AdminPathError(component: "policy.d", reason: .notAbsolute))
    }

    @Test func procPathsAreRefused() throws {
        defer { remove() }
        for path in ["/proc/self/root" + root + "/policy.d", "/proc/1/root/etc", "/proc/\(getpid())/cwd", "/proc"] {
            #expect(refusal(path) == AdminPathError(component: "proc", reason: .pseudoFilesystem("procfs")), "\(path)")
        }
        #expect(
            refusal("/proc/self/root/usr/bin/env", kind: .program)
                == AdminPathError(component: "proc", reason: .pseudoFilesystem("procfs")))
        #expect(refusal("/sys/kernel") == AdminPathError(component: "sys", reason: .pseudoFilesystem("sysfs")))
    }

    @Test func aComponentOwnedByAnotherUserIsRefused() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test changes owners")
        chown(root, 65534, 65534)
        #expect(
            refusal(root + "/policy.d")
                == AdminPathError(component: (root as NSString).lastPathComponent, reason: .notOwnedByRoot(uid: 65534)))
        chown(root, 0, 0)
        chown(root + "/policy.d/10-a.json", 65534, 65534)
        #expect(
            refusal(root + "/policy.d/10-a.json", kind: .file)
                == AdminPathError(component: "10-a.json", reason: .notOwnedByRoot(uid: 65534)))
    }

    /// An input root gives away after it was opened (`chown` to a user, `chmod o+w`) is refused
    /// at its next use, not read on the strength of the first check.
    @Test func anInputGivenAwayAfterItWasOpenedIsRefusedAtItsNextUse() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test changes owners")
        let file = try AdminPath.open(root + "/policy.d/10-a.json", kind: .file)
        let directory = try AdminPath.open(root + "/policy.d", kind: .directory)
        try file.verifyHeld()
        #expect(try directory.entries() == ["10-a.json"])
        chown(root + "/policy.d/10-a.json", 65534, 65534)
        #expect(throws: AdminPathError(component: "10-a.json", reason: .notOwnedByRoot(uid: 65534))) {
            try file.verifyHeld()
        }
        chmod(root + "/policy.d", 0o757)
        #expect(throws: AdminPathError(component: "policy.d", reason: .writableByOthers)) {
            _ = try directory.entries()
        }
        chmod(root + "/policy.d", 0o755)
        #expect(try directory.entries() == ["10-a.json"])
    }

    @Test func aGroupWritableComponentIsRefused() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test makes root's files")
        chmod(root, 0o775)
        #expect(
            refusal(root + "/policy.d")
                == AdminPathError(component: (root as NSString).lastPathComponent, reason: .writableByOthers))
        // A sticky directory above is no way in (another user can neither rename nor remove
        // root's entry), but the admin directory itself may not be writable even when sticky.
        chmod(root, 0o1777)
        #expect(refusal(root + "/policy.d") == nil)
        chmod(root + "/policy.d", 0o1777)
        #expect(refusal(root + "/policy.d") == AdminPathError(component: "policy.d", reason: .writableByOthers))
        chmod(root + "/policy.d", 0o755)
        chmod(root + "/policy.d/10-a.json", 0o620)
        #expect(
            refusal(root + "/policy.d/10-a.json", kind: .file)
                == AdminPathError(component: "10-a.json", reason: .writableByOthers))
    }

    @Test func kindsAreChecked() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test makes root's files")
        #expect(
            refusal(root + "/policy.d/10-a.json")
                == AdminPathError(component: "10-a.json", reason: .notADirectory))
        #expect(
            refusal(root + "/policy.d", kind: .file) == AdminPathError(component: "policy.d", reason: .notARegularFile))
        chmod(root + "/policy.d/10-a.json", 0o644)
        #expect(
            refusal(root + "/policy.d/10-a.json", kind: .program)
                == AdminPathError(component: "10-a.json", reason: .notExecutable))
        #expect(refusal(root + "/none") == AdminPathError(component: "none", reason: .missing))
        let file = try AdminPath.open(root + "/policy.d/10-a.json", kind: .file)
        #expect(try file.readFile(limit: 10) == Array("{}".utf8))
    }

    @Test func aMissingTailIsCheckedAsItAppears() throws {
        defer { remove() }
        try #require(getuid() == 0, "the test makes root's files")
        let opened = try AdminPath.open(root + "/cordon/policy.d", kind: .directory, allowMissing: true)
        #expect(opened.remainder == ["cordon", "policy.d"])
        #expect(opened.descriptorPath.hasSuffix("/cordon/policy.d"))
        #expect(throws: AdminPathError(component: "cordon", reason: .missing)) { try opened.entries() }
        try FileManager.default.createDirectory(atPath: root + "/cordon/policy.d", withIntermediateDirectories: true)
        chmod(root + "/cordon", 0o755)
        chmod(root + "/cordon/policy.d", 0o755)
        try "{}".write(toFile: root + "/cordon/policy.d/20.json", atomically: true, encoding: .utf8)
        #expect(try opened.entries() == ["20.json"])
        // A component that appears as another user's is refused when read.
        chown(root + "/cordon/policy.d", 65534, 65534)
        #expect(throws: AdminPathError(component: "policy.d", reason: .notOwnedByRoot(uid: 65534))) {
            try opened.entries()
        }
        // So is a link put in its place.
        try FileManager.default.removeItem(atPath: root + "/cordon/policy.d")
        try FileManager.default.createSymbolicLink(
            atPath: root + "/cordon/policy.d", withDestinationPath: root + "/policy.d")
        #expect(throws: AdminPathError(component: "policy.d", reason: .symbolicLink)) { try opened.entries() }
    }
}
