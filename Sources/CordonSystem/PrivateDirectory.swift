import Foundation

/// The agent's directories (runtime, data, config) are the user's alone: mode 0700, owned by
/// the user. Enforced at every start, not only at creation, so a directory made earlier with
/// a looser mode (by a umask of 022, by hand, by an older version) is tightened, and the agent
/// logs that it did.
public enum PrivateDirectory {
    /// Creates `directory` (and missing parents) with mode 0700, or tightens an existing one to
    /// 0700. Refuses a path that is not a directory and one owned by another user. Returns what
    /// it tightened, nil when the directory was already private (or just created).
    @discardableResult
    public static func enforce(_ directory: String, uid: UInt32) throws -> PermissionChange? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if !isDirectory.boolValue {
            throw RuntimeDirectoryError.notADirectory(directory)
        }
        var info = stat()
        guard stat(directory, &info) == 0 else { throw SystemError(operation: "stat(\(directory))", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw RuntimeDirectoryError.notADirectory(directory) }
        guard info.st_uid == uid else { throw RuntimeDirectoryError.wrongOwner(directory, owner: info.st_uid) }
        let mode = info.st_mode & 0o7777
        guard mode != 0o700 else { return nil }
        guard chmod(directory, 0o700) == 0 else { throw SystemError(operation: "chmod(\(directory))", errno: errno) }
        return PermissionChange(path: directory, from: mode, to: 0o700)
    }
}

/// A mode the agent tightened at start: which path, from what, to what.
public struct PermissionChange: Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let from: mode_t
    public let to: mode_t

    public init(path: String, from: mode_t, to: mode_t) {
        self.path = path
        self.from = from
        self.to = to
    }

    /// `PATH: 0755 -> 0700`.
    public var description: String { "\(path): \(Self.octal(from)) -> \(Self.octal(to))" }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
