import CCordonLinux
import Foundation
import Glibc

/// The filesystem as a registered app sees it: its root directory as the kernel shows it
/// (`/proc/PID/root`, held open), in which the paths it names are resolved — never in the agent's
/// own root, working directory or `/proc/self` (docs/ARCHITECTURE.md, "Components":
/// `DocumentsComponent`).
///
/// ``resolve(_:)`` walks a path one component at a time from that root, each opened with
/// `O_PATH | O_NOFOLLOW` relative to the directory before it: a symlink is read (`readlinkat`)
/// and its target resolved inside the same root (an absolute one from the root, `..` never above
/// it: what `openat2`'s `RESOLVE_IN_ROOT` does), and every component's filesystem is checked
/// (`fstatfs`): a path that reaches `/proc`, `/sys`, `/dev/pts` or another pseudo-filesystem is
/// refused there. (`openat2` alone cannot do this: `/proc/self` is an ordinary symlink, which it
/// follows into the *agent's* `/proc/PID`, and it checks no filesystem on the way.) Nothing is
/// named twice: a component swapped for a link while the walk runs is read as a link and lands
/// in the same checks.
public final class SenderView: Sendable {
    /// The root directory (`O_PATH | O_DIRECTORY`), closed with the view.
    public let root: CInt

    /// `O_PATH`: a descriptor that names a file without opening it (no side effect, no read).
    static let pathOnly = cordon_o_path()

    /// How many symlinks one path may go through (the kernel's `MAXSYMLINKS`).
    public static let maximumLinks = 40

    /// Takes ownership of an open directory descriptor.
    public init(adoptingRoot root: CInt) {
        self.root = root
    }

    /// The root of process `pid` (`/proc/PID/root`, opened `O_PATH | O_DIRECTORY`). Needs the
    /// process to be readable by the agent (the same user and dumpable, or the agent privileged);
    /// `pidfd`, when given, is asked afterwards whether the process still lives, so a recycled pid
    /// is never read.
    public convenience init(pid: Int32, pidfd: Pidfd?) throws(OpenedDocument.Refusal) {
        let descriptor = Glibc.open("/proc/\(pid)/root", Self.pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw OpenedDocument.Refusal(
                description:
                    "the root directory of process \(pid) cannot be opened: \(String(cString: strerror(errno)))"
            )
        }
        guard pidfd?.isAlive ?? true else {
            Glibc.close(descriptor)
            throw OpenedDocument.Refusal(description: "process \(pid) has exited")
        }
        self.init(adoptingRoot: descriptor)
    }

    deinit { Glibc.close(root) }

    /// A regular file resolved in this view.
    public struct File: Sendable {
        /// The path in the sender's view: absolute, every `.`, `..` and symlink resolved.
        public let canonicalPath: String
        /// Open read-only (`O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC`).
        public let descriptor: CInt
        /// Its `fstat`.
        public let status: stat
    }

    /// Resolves the absolute `path` in this view and opens the regular file it names, or throws a
    /// refusal naming the path and why: it does not resolve, it goes through a pseudo-filesystem,
    /// it names no regular file (a directory, FIFO, socket or device is never opened for reading).
    public func resolve(_ path: String) throws(OpenedDocument.Refusal) -> File {
        guard path.hasPrefix("/") else { throw OpenedDocument.Refusal(description: "\(path) is not an absolute path") }
        if let pseudo = PseudoFilesystem.name(of: root) {
            throw OpenedDocument.Refusal(description: "the sender's root is on \(pseudo), a pseudo-filesystem")
        }
        var walk = Walk(root: root)
        defer { walk.closeAll() }
        var pending: [Substring] = path.split(separator: "/").reversed()
        var links = 0
        var last: (descriptor: CInt, status: stat)?
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                walk.pop()
                last = nil
                continue
            }
            let name = String(component)
            let descriptor = openat(walk.current, name, Self.pathOnly | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw OpenedDocument.Refusal(
                    description: "\(path) does not resolve: \(String(cString: strerror(errno))) (at \(walk.path(name)))"
                )
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(descriptor)
                throw OpenedDocument.Refusal(description: "\(path) does not resolve: \(reason) (at \(walk.path(name)))")
            }
            if status.st_mode & S_IFMT == S_IFLNK {
                links += 1
                let target = Self.linkTarget(descriptor)
                Glibc.close(descriptor)
                guard links <= Self.maximumLinks, let target, !target.isEmpty else {
                    throw OpenedDocument.Refusal(
                        description:
                            "\(path) does not resolve: \(links > Self.maximumLinks ? "too many levels of symbolic links" : "an unreadable link") (at \(walk.path(name)))"
                    )
                }
                if target.hasPrefix("/") {
                    walk.popAll()
                    last = nil
                }
                pending.append(contentsOf: target.split(separator: "/").reversed())
                continue
            }
            if let pseudo = PseudoFilesystem.name(of: descriptor) {
                Glibc.close(descriptor)
                throw OpenedDocument.Refusal(
                    description: "\(path) is not a document: \(walk.path(name)) is on \(pseudo), a pseudo-filesystem")
            }
            walk.push(descriptor, name: name)
            last = (descriptor, status)
            if status.st_mode & S_IFMT != S_IFDIR, !pending.isEmpty {
                throw OpenedDocument.Refusal(
                    description: "\(path) does not resolve: \(String(cString: strerror(ENOTDIR))) (at \(walk.path()))")
            }
        }
        let canonicalPath = walk.path()
        guard let last, last.status.st_mode & S_IFMT == S_IFREG, let name = walk.names.last else {
            throw OpenedDocument.Refusal(description: "\(canonicalPath) is not a regular file")
        }
        // Opened for reading relative to its directory, without following a link, and checked to be
        // the very file the walk saw (a rename in between is refused, not read).
        let descriptor = openat(walk.parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw OpenedDocument.Refusal(
                description: "\(canonicalPath) cannot be opened: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_dev == last.status.st_dev,
            status.st_ino == last.status.st_ino, status.st_mode & S_IFMT == S_IFREG
        else {
            Glibc.close(descriptor)
            throw OpenedDocument.Refusal(description: "\(canonicalPath) changed while it was opened")
        }
        return File(canonicalPath: canonicalPath, descriptor: descriptor, status: status)
    }

    /// The target of the symlink open as `descriptor` (`O_PATH | O_NOFOLLOW`), or nil.
    static func linkTarget(_ descriptor: CInt) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(descriptor, "", &buffer, Int(PATH_MAX))
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The directories a walk went through below the root, as descriptors it holds and names.
    private struct Walk {
        let root: CInt
        var descriptors: [CInt] = []
        var names: [String] = []

        /// The directory the next component is opened in.
        var current: CInt { descriptors.last ?? root }
        /// The directory of the last component.
        var parent: CInt { descriptors.count >= 2 ? descriptors[descriptors.count - 2] : root }

        mutating func push(_ descriptor: CInt, name: String) {
            descriptors.append(descriptor)
            names.append(name)
        }

        /// `..`: one level up, never above the root.
        mutating func pop() {
            guard let descriptor = descriptors.popLast() else { return }
            Glibc.close(descriptor)
            names.removeLast()
        }

        mutating func popAll() {
            while !descriptors.isEmpty { pop() }
        }

        mutating func closeAll() {
            for descriptor in descriptors { Glibc.close(descriptor) }
            descriptors = []
        }

        /// The path walked so far (in the sender's view), plus `next`.
        func path(_ next: String? = nil) -> String {
            "/" + (names + (next.map { [$0] } ?? [])).joined(separator: "/")
        }
    }
}
