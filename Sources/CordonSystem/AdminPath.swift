import CCordonLinux
import Glibc

/// An admin input (the admin policy or trust directory, the admin settings, the pinentry, a
/// Flatpak installation) opened once, component by component, and from then on read through the
/// descriptor held, never by its name again (docs/ARCHITECTURE.md, "A policy file, from disk to
/// a decision"; docs/THREAT-MODEL.md, "Admin policy").
///
/// Each component is opened with `O_PATH | O_NOFOLLOW` relative to the one before, starting at
/// `/`: a symbolic link (and so every magic link of `/proc`) is refused rather than followed, a
/// `..` is refused before anything is opened, and a component on a pseudo-filesystem (`proc`,
/// `sysfs`: what `/proc/PID/root/...` names depends on the process, not on the administrator)
/// is refused by its `fstatfs` type, as is one on FUSE (a user may mount one on a directory of
/// their own, and it reports whatever owner its server says). Each component must be owned by
/// root and writable by no one else: no group or other write, except that a directory above the
/// last component may be sticky (`/tmp`: another user can neither rename nor remove root's entry
/// in it).
///
/// Since no component can be replaced by anyone but root, and what is read later goes through
/// the held descriptor, a later rename or retarget of the path's name changes nothing.
public final class AdminPath: Sendable, Equatable, CustomStringConvertible {
    /// What the path must name.
    public enum Kind: Sendable, Equatable {
        /// A directory of admin files: not writable by group or others even when sticky.
        case directory
        /// A regular file.
        case file
        /// A regular file executable by its owner: run through the descriptor held.
        case program
    }

    /// The path as it was named (for messages and the status).
    public let path: String
    /// What the path names.
    public let kind: Kind
    /// An `O_PATH` descriptor of the deepest component opened: the path itself, unless
    /// `remainder` names components that did not exist yet.
    public let descriptor: Int32
    /// The components below `descriptor` that did not exist when the path was opened (only when
    /// it was opened with `allowMissing`); they are opened, and checked, at each read.
    public let remainder: [String]

    private init(path: String, kind: Kind, descriptor: Int32, remainder: [String]) {
        self.path = path
        self.kind = kind
        self.descriptor = descriptor
        self.remainder = remainder
    }

    deinit { close(descriptor) }

    public static func == (lhs: AdminPath, rhs: AdminPath) -> Bool { lhs === rhs }

    public var description: String { path }

    /// Whether the whole path was there when opened.
    public var isComplete: Bool { remainder.isEmpty }

    /// The path of the held descriptor through this process's `/proc/self/fd`, with `remainder`:
    /// what inotify watches (the kernel resolves it to the held directory, not by name).
    public var descriptorPath: String {
        (["/proc/self/fd/\(descriptor)"] + remainder).joined(separator: "/")
    }

    /// Opens `path` as an admin input of `kind`. With `allowMissing` (a directory only), a path
    /// whose last components do not exist yet is held at the deepest one that does; they are
    /// checked as they appear.
    public static func open(_ path: String, kind: Kind, allowMissing: Bool = false) throws(AdminPathError) -> AdminPath
    {
        guard path.hasPrefix("/") else { throw AdminPathError(component: path, reason: .notAbsolute) }
        let components = path.split(separator: "/").map(String.init).filter { $0 != "." }
        if components.contains("..") { throw AdminPathError(component: "..", reason: .parentComponent) }
        var current = Glibc.open("/", openPath | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw AdminPathError(component: "/", reason: .unreadable(errno: errno)) }
        do {
            try check(current, name: "/", last: components.isEmpty, kind: kind)
            for (index, name) in components.enumerated() {
                let next: Int32
                do {
                    next = try step(from: current, name: name, last: index == components.count - 1, kind: kind)
                } catch  where error.reason == .missing && allowMissing && kind == .directory {
                    return AdminPath(
                        path: path, kind: kind, descriptor: current, remainder: Array(components[index...]))
                }
                close(current)
                current = next
            }
        } catch {
            close(current)
            throw error
        }
        return AdminPath(path: path, kind: kind, descriptor: current, remainder: [])
    }

    /// Checks the held descriptor again as at start — root's, writable by no one else, of its
    /// kind — so that an input root later gave to another user (`chown`, `chmod o+w`) is refused
    /// from then on, not read on the strength of the first check.
    public func verifyHeld() throws(AdminPathError) {
        let name = path.split(separator: "/").last.map(String.init) ?? "/"
        let shown =
            remainder.isEmpty
            ? name : (path.split(separator: "/").dropLast(remainder.count).last.map(String.init) ?? "/")
        try Self.check(descriptor, name: shown, last: remainder.isEmpty, kind: kind)
    }

    /// A new `O_PATH` descriptor of the whole path, checked again (``verifyHeld()``), `remainder`
    /// opened and checked as at start; the caller closes it. Throws `.missing` while a component
    /// is still absent.
    public func open() throws(AdminPathError) -> Int32 {
        try verifyHeld()
        var current = dup(descriptor)
        guard current >= 0 else { throw AdminPathError(component: path, reason: .unreadable(errno: errno)) }
        for (index, name) in remainder.enumerated() {
            do {
                let next = try Self.step(from: current, name: name, last: index == remainder.count - 1, kind: kind)
                close(current)
                current = next
            } catch {
                close(current)
                throw error
            }
        }
        _ = fcntl(current, F_SETFD, FD_CLOEXEC)
        return current
    }

    /// The names in the directory (without `.` and `..`); none while it does not exist.
    public func entries() throws(AdminPathError) -> [String] {
        let directory = try open()
        defer { close(directory) }
        let readable = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard readable >= 0 else { throw AdminPathError(component: path, reason: .unreadable(errno: errno)) }
        guard let stream = fdopendir(readable) else {
            close(readable)
            throw AdminPathError(component: path, reason: .unreadable(errno: errno))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads the file `name` of the directory as `BoundedFile` does, opened relative to the held
    /// descriptor; errors name it as `path/name`.
    public func read(_ name: String, limit: Int) throws(BoundedFileError) -> [UInt8] {
        let shown = path + "/" + name
        let directory: Int32
        do {
            directory = try open()
        } catch {
            if error.reason == .missing { throw .unreadable(shown, errno: ENOENT) }
            throw .unreadable(shown, errno: EACCES)
        }
        defer { close(directory) }
        return try BoundedFile.read(at: directory, name, shownAs: shown, limit: limit)
    }

    /// Reads the file itself (kind `.file`), through the held descriptor; the caller checks it
    /// again first (``verifyHeld()``).
    public func readFile(limit: Int) throws(BoundedFileError) -> [UInt8] {
        // Reopening the held descriptor through its magic link opens the inode that was checked.
        try BoundedFile.read(at: AT_FDCWD, "/proc/self/fd/\(descriptor)", shownAs: path, limit: limit)
    }

    /// Opens `name` below `directory` without following it, and checks it.
    private static func step(from directory: Int32, name: String, last: Bool, kind: Kind) throws(AdminPathError)
        -> Int32
    {
        let next = openat(directory, name, Self.openPath | O_NOFOLLOW | O_CLOEXEC)
        guard next >= 0 else {
            let code = errno
            throw AdminPathError(component: name, reason: code == ENOENT ? .missing : .unreadable(errno: code))
        }
        do {
            try check(next, name: name, last: last, kind: kind)
        } catch {
            close(next)
            throw error
        }
        return next
    }

    /// `O_PATH`, which Glibc's module map leaves out (it is `_GNU_SOURCE`).
    static let openPath = cordon_o_path()

    /// FUSE's type (`fuse`, `fuseblk`): what it reports is whatever its server, possibly the
    /// user's, says.
    static let fuseMagic: Int64 = 0x6573_5546

    /// Checks the component opened as `descriptor`: not a link, not on a pseudo-filesystem,
    /// root's and writable by no one else, and of the kind asked when it is the last one.
    private static func check(_ descriptor: Int32, name: String, last: Bool, kind: Kind) throws(AdminPathError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw AdminPathError(component: name, reason: .unreadable(errno: errno))
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK { throw AdminPathError(component: name, reason: .symbolicLink) }
        var system: Int64 = 0
        let rc = cordon_filesystem_type(descriptor, &system)
        guard rc == 0 else { throw AdminPathError(component: name, reason: .unreadable(errno: -rc)) }
        // Whose contents depend on who looks (`/proc/PID/root/...`), or are views of the kernel.
        if let pseudo = PseudoFilesystem.name(ofType: Int(system)) {
            throw AdminPathError(component: name, reason: .pseudoFilesystem(pseudo))
        }
        if system == fuseMagic { throw AdminPathError(component: name, reason: .userFilesystem("fuse")) }
        guard info.st_uid == 0 else { throw AdminPathError(component: name, reason: .notOwnedByRoot(uid: info.st_uid)) }
        let writable = info.st_mode & (S_IWGRP | S_IWOTH) != 0
        let sticky = info.st_mode & S_ISVTX != 0
        if writable && (last || !sticky || type != S_IFDIR) {
            throw AdminPathError(component: name, reason: .writableByOthers)
        }
        if !last || kind == .directory {
            guard type == S_IFDIR else { throw AdminPathError(component: name, reason: .notADirectory) }
            return
        }
        guard type == S_IFREG else { throw AdminPathError(component: name, reason: .notARegularFile) }
        if kind == .program && info.st_mode & S_IXUSR == 0 {
            throw AdminPathError(component: name, reason: .notExecutable)
        }
    }
}
