import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The workspace's file operations: whole files written atomically (a temporary file in the same
/// directory, fsync, rename), so an upload or a crash never sees half a file.
enum FleetFiles {
    /// Reads all of `path`.
    static func read(_ path: String) throws(FleetAdminError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, F_OK) == 0 ? "permission denied or not a file" : "no such file"
            throw FleetAdminError(.io, "cannot read \(path): \(reason)", hint: "check the path and its permissions")
        }
        return Array(data)
    }

    /// Whether `path` exists.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Writes `bytes` to `path` atomically with `mode`; the directory is created (0755) when missing.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(FleetAdminError) {
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        try makeDirectory(directory, mode: 0o755)
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw writeError(temporary) }
        var offset = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
        let error = writeError(path)
        guard ok, fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = writeError(path)
            unlink(temporary)
            throw error
        }
    }

    /// Creates `path` and its parents when missing.
    static func makeDirectory(_ path: String, mode: mode_t) throws(FleetAdminError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw FleetAdminError(.io, "\(path) is not a directory", hint: "move the file out of the way")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw FleetAdminError(
                .io, "cannot create \(path): \(error.localizedDescription)", hint: "check permissions")
        }
    }

    /// Removes `path` if it exists.
    static func remove(_ path: String) throws(FleetAdminError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw writeError(path) }
    }

    /// The file's modification time in whole seconds, or 0 when there is no file.
    static func modificationSecond(_ path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_mtim.tv_sec) : 0
    }

    /// Sets the file's modification time to now, or to `minimum` seconds if now is earlier.
    static func setModificationSecond(_ path: String, atLeast minimum: Int) {
        let second = max(Int(time(nil)), minimum)
        var times = [timespec(tv_sec: second, tv_nsec: 0), timespec(tv_sec: second, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    static func writeError(_ path: String) -> FleetAdminError {
        FleetAdminError(
            .io, "cannot write \(path): \(String(cString: strerror(errno)))",
            hint: "check the directory's permissions and free space")
    }

    /// Runs `body` holding an exclusive lock on `DIR/.lock` (a cron's `timestamp` and an admin's
    /// `publish` never interleave).
    static func locked<T>(_ directory: String, _ body: () throws(FleetAdminError) -> T) throws(FleetAdminError) -> T {
        let path = directory + "/.lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw writeError(path) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw writeError(path) }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
