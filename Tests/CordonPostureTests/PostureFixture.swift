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

    /// A probe of the tree for uid 1000; `gsettings` answers `screenLock`, `dconf read` answers
    /// `dconf`, and logind (`loginctl`) knows the user's display session `session` (its id and
    /// type); nil: no such program, or it fails.
    func probe(
        minimums: PostureMinimums = PostureMinimums(), screenLock: String? = nil, dconf: String? = nil,
        session: (id: String, type: String)? = nil
    ) -> PostureProbe {
        PostureProbe(root: root, minimums: minimums, uid: 1000) { program, arguments in
            switch (program, arguments.first) {
            case ("gsettings", "get"): return screenLock
            case ("dconf", "read"): return dconf
            case ("loginctl", "show-user"):
                return arguments.contains("1000") && arguments.contains("--property=Display")
                    ? (session?.id ?? "") + "\n" : nil
            case ("loginctl", "show-session"):
                guard let session, arguments.contains(session.id), arguments.contains("--property=Type") else {
                    return nil
                }
                return session.type + "\n"
            default: return nil
            }
        }
    }
}
