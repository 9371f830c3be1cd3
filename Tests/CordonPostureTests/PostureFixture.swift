import CordonPosture
import CordonProtocol
import Foundation

/// A fixture tree standing in for `/` (this build machine has no EFI, securityfs or dm-crypt).
final class PostureFixture {
    let root: String

    init() throws {
        root = "/tmp/cordon-posture-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `contents` at `path` under the root, making its directories.
    func write(_ path: String, _ contents: String) throws {
        try write(path, Array(contents.utf8))
    }

    func write(_ path: String, _ bytes: [UInt8]) throws {
        let full = root + path
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
    }

    func directory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: true)
    }

    /// A probe of the tree; `gsettings` answers `screenLock` (nil: no such program).
    func probe(minimums: PostureMinimums = PostureMinimums(), screenLock: String? = nil) -> PostureProbe {
        PostureProbe(root: root, minimums: minimums) { program, _ in program == "gsettings" ? screenLock : nil }
    }
}
