import Glibc

/// The files a process runs code from, read from `/proc/PID/maps`, and whether each is a system
/// file its user cannot have changed (docs/THREAT-MODEL.md, "Sandboxed apps").
public enum ExecutableMappings {
    /// One executable file mapping: the path as the process sees it and the file's identity.
    public struct Mapping: Sendable, Equatable {
        public var path: String
        public var device: UInt64
        public var inode: UInt64
    }

    /// The distinct files mapped executable in `maps` (the text of `/proc/PID/maps`), in order.
    /// Anonymous and special mappings (`[vdso]`) are left out; a deleted or memfd file keeps its
    /// text (`/memfd:x (deleted)`) so that the check refuses it.
    public static func parse(_ maps: String) -> [Mapping] {
        var seen = Set<[UInt64]>()
        var mappings: [Mapping] = []
        for line in maps.split(separator: "\n") {
            // address perms offset dev inode path — the path is the rest of the line.
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].count == 4, fields[1].dropFirst(2).first == "x" else { continue }
            let path = fields[5].trimmingCharacters(in: " ")
            // Files are absolute paths; "[vdso]" and the like are not. Compared as bytes: "/"
            // followed by a combining mark is one Character and would fail `hasPrefix("/")`.
            guard path.utf8.first == UInt8(ascii: "/") else { continue }
            let numbers = fields[3].split(separator: ":").compactMap { UInt64($0, radix: 16) }
            guard numbers.count == 2, let inode = UInt64(fields[4]) else { continue }
            let device = deviceNumber(major: numbers[0], minor: numbers[1])
            guard seen.insert([device, inode]).inserted else { continue }
            mappings.append(Mapping(path: path, device: device, inode: inode))
        }
        return mappings
    }

    /// glibc's `makedev`: a device number as `stat` reports it.
    static func deviceNumber(major: UInt64, minor: UInt64) -> UInt64 {
        ((major & 0xffff_f000) << 32) | ((major & 0xfff) << 8) | ((minor & 0xffff_ff00) << 12) | (minor & 0xff)
    }

    /// The first executable mapping of `pid` that is not a system file — owned by root and
    /// writable by no one else, the very file the process mapped (device and inode checked
    /// through the process's own root) — described for a refusal; nil when every one is.
    /// Unreadable maps count as a problem. `exempt` (device and inode) is a file the caller
    /// vouches for otherwise: a host app's executable whose digest its binding checks.
    public static func problem(pid: Int32, exempt: (device: UInt64, inode: UInt64)? = nil) -> String? {
        guard let bytes = try? BoundedFile.read("/proc/\(pid)/maps", limit: 1 << 22),
            let maps = String(validating: bytes, as: UTF8.self)
        else {
            return "its memory map cannot be read"
        }
        let mappings = parse(maps)
        guard !mappings.isEmpty else { return "it maps no executable file" }
        for mapping in mappings where !(exempt.map { $0 == (mapping.device, mapping.inode) } ?? false) {
            if let problem = problem(with: mapping, root: "/proc/\(pid)/root") { return problem }
        }
        return nil
    }

    /// Why `mapping`, looked up under `root`, is not a system file; nil when it is.
    static func problem(with mapping: Mapping, root: String) -> String? {
        guard !mapping.path.hasSuffix(" (deleted)") else {
            return "it runs code from \(mapping.path), a file that no longer exists"
        }
        var info = stat()
        guard stat(root + mapping.path, &info) == 0 else {
            return "it runs code from \(mapping.path), which cannot be looked up"
        }
        guard UInt64(info.st_dev) == mapping.device, UInt64(info.st_ino) == mapping.inode else {
            return "it runs code from a file that is no longer at \(mapping.path)"
        }
        guard info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            return "it runs code from \(mapping.path), which is not a root-owned system file"
        }
        return nil
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}
