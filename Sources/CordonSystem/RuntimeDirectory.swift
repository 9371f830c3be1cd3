import CCordonLinux
import Foundation

/// Prepares the runtime directory and socket path without ever stealing a live socket.
public enum RuntimeDirectory {
    /// Creates `directory` with mode 0700 (or tightens it), refusing one owned by another user.
    /// Returns what it tightened (see `PrivateDirectory`).
    @discardableResult
    public static func prepare(_ directory: String, uid: UInt32) throws -> PermissionChange? {
        try PrivateDirectory.enforce(directory, uid: uid)
    }

    /// Makes `path` free for a new socket: removes a stale socket, refuses a live one.
    public static func claimSocketPath(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // Nothing there.
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { throw RuntimeDirectoryError.notASocket(path) }
        let probe = cordon_probe_unix_socket(path)
        if probe == 1 { throw RuntimeDirectoryError.socketInUse(path) }
        guard unlink(path) == 0 else { throw SystemError(operation: "unlink(\(path))", errno: errno) }
    }
}

/// Why the runtime directory or socket path cannot be used.
public enum RuntimeDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    case notADirectory(String)
    case wrongOwner(String, owner: UInt32)
    case notASocket(String)
    case socketInUse(String)

    public var description: String {
        switch self {
        case .notADirectory(let path): return "\(path) exists and is not a directory"
        case .wrongOwner(let path, let owner): return "\(path) belongs to uid \(owner), not to this user"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; remove it or choose another runtime directory"
        case .socketInUse(let path): return "another agent is already listening on \(path)"
        }
    }
}
