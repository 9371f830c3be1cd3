import CordonKit
import CordonPolicy
import CordonProtocol
import CordonSystem
import Foundation

/// Policy files on disk: reading, local validation with the pure parser, and atomic installs.
enum PolicyFiles {
    /// The largest policy file cordond reads; larger files are rejected.
    static let maxFileBytes = 1 << 20

    /// Validates `bytes` as the file `path` (an admin file, or with `user` a user file), as
    /// cordond would; returns every problem, empty when valid. Signatures are not checked here.
    static func problems(in bytes: [UInt8], path: String, user: Bool) -> [String] {
        guard bytes.count <= maxFileBytes else {
            return ["\(path): larger than \(maxFileBytes) bytes (cordond would reject it)"]
        }
        let source = PolicySource(path: path, origin: user ? .user : .admin)
        switch PolicyParser.parse(bytes, source: source) {
        case .success: return []
        case .failure(let failure): return failure.diagnostics.map(\.description)
        }
    }

    /// Reads the file at `path` (`-`: standard input), at most one byte past the policy limit.
    static func read(_ path: String) throws(CLIError) -> [UInt8] {
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw readError(path) }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var info = stat()
        if path != "-", fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw CLIError("cannot read \(path): it is a directory", hint: "name the policy files, e.g. \(path)/*.json")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maxFileBytes {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw readError(path)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// The error for a file that cannot be read, with `errno`'s reason.
    static func readError(_ path: String) -> CLIError {
        let reason = String(cString: strerror(errno))
        let hint = errno == EACCES ? "check the file's permissions" : "check the path"
        return CLIError("cannot read \(path): \(reason)", hint: hint)
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to
    /// disk, then renamed over `path`. The temporary name starts with a dot and does not end in
    /// `.json`, so cordond never reads a half-written file.
    static func install(_ bytes: [UInt8], at path: String, mode: mode_t) throws(CLIError) {
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory)/.\(name).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw writeError(directory) }
        var failure: CLIError?
        let written = DescriptorWriter.writeAll(bytes, to: descriptor)
        if !written || fchmod(descriptor, mode) != 0 || fsync(descriptor) != 0 { failure = writeError(directory) }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = writeError(directory) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// Creates `directory` and its parents (new ones with `mode`) when missing.
    static func makeDirectory(_ directory: String, mode: Int) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        } catch {
            if access(directory, F_OK) != 0 { throw writeError(directory) }
        }
    }

    /// The error for a directory that cannot be written, with `errno`'s reason.
    static func writeError(_ directory: String) -> CLIError {
        let reason = String(cString: strerror(errno))
        let hint =
            errno == EACCES || errno == EPERM
            ? "you may not write there: admin policies need root (sudo), or choose another --dir"
            : "check the directory and the disk"
        return CLIError("cannot write to \(directory): \(reason)", hint: hint)
    }
}

/// The policy directories cordon installs into, resolved as cordond resolves them.
enum PolicyPaths {
    /// `$CORDON_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cordon`, else `~/.config/cordon`, plus `/policy.d`.
    static var user: String {
        CordonPaths.resolve(environment: ProcessInfo.processInfo.environment, uid: UInt32(getuid()))
            .configDirectory + "/policy.d"
    }

    /// `$CORDON_ADMIN_POLICY_DIR`, else `/etc/cordon/policy.d`.
    static var admin: String { environment("CORDON_ADMIN_POLICY_DIR") ?? "/etc/cordon/policy.d" }

    /// `$CORDON_TRUST_DIR`, else `/etc/cordon/trust`.
    static var trust: String { environment("CORDON_TRUST_DIR") ?? "/etc/cordon/trust" }

    private static func environment(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// `path` without trailing slashes (but `/` stays `/`).
    static func normalized(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
