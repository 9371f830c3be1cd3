import Glibc

/// Why an admin path was refused: the component that failed and why
/// (docs/THREAT-MODEL.md, "Admin policy").
public struct AdminPathError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the component.
    public enum Reason: Sendable, Equatable {
        /// The path is not absolute.
        case notAbsolute
        /// The path has a `..` component (it would be resolved by name, not by what was checked).
        case parentComponent
        /// The component is a symbolic link (or a magic link of `/proc`).
        case symbolicLink
        /// The component is on a pseudo-filesystem (`proc`, `sysfs`): what it names depends on
        /// who looks, not on the administrator.
        case pseudoFilesystem(String)
        /// The component is on a file system an ordinary user can mount and serve (FUSE, through
        /// `fusermount` on a directory of their own): the owner and mode it reports are the user's word.
        case userFilesystem(String)
        /// The component is owned by another user than root.
        case notOwnedByRoot(uid: UInt32)
        /// Group or others may write the component.
        case writableByOthers
        /// The component does not exist.
        case missing
        /// The component cannot be opened or examined.
        case unreadable(errno: Int32)
        /// The component should be a directory and is not.
        case notADirectory
        /// The last component should be a regular file and is not.
        case notARegularFile
        /// The last component should be executable and is not.
        case notExecutable
    }

    /// The component that failed (`/` for the root directory).
    public let component: String
    public let reason: Reason

    /// Creates an error for `component`.
    public init(component: String, reason: Reason) {
        self.component = component
        self.reason = reason
    }

    public var description: String {
        let name = "component '\(component)'"
        switch reason {
        case .notAbsolute: return "is not an absolute path"
        case .parentComponent: return "\(name) climbs to the parent directory; give the path without '..'"
        case .symbolicLink: return "\(name) is a symbolic link"
        case .pseudoFilesystem(let type):
            return "\(name) is on the \(type) pseudo-filesystem, whose contents depend on who reads them"
        case .userFilesystem(let type):
            return "\(name) is on a \(type) file system, which an ordinary user can mount and serve"
        case .notOwnedByRoot(let uid): return "\(name) is not owned by root (uid \(uid))"
        case .writableByOthers: return "\(name) is writable by group or others"
        case .missing: return "\(name) does not exist"
        case .unreadable(let code): return "\(name) cannot be opened: \(String(cString: strerror(code)))"
        case .notADirectory: return "\(name) is not a directory"
        case .notARegularFile: return "\(name) is not a regular file"
        case .notExecutable: return "\(name) is not executable"
        }
    }
}
