import CordonSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a file so that a reader (or a crash) sees the old bytes or the new, never part: a
/// temporary file in the same directory, fsync, rename, fsync of the directory.
public enum AtomicFile {
    /// Writes `bytes` to `path` with `mode`.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(FleetdError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/." + (path as NSString).lastPathComponent + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw failure("create \(temporary)") }
        let ok = DescriptorWriter.writeAll(bytes, to: fd) && fchmod(fd, mode) == 0 && fsync(fd) == 0
        close(fd)
        guard ok else {
            unlink(temporary)
            throw failure("write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("rename \(temporary) to \(path)")
        }
        syncDirectory(directory)
    }

    /// Removes `path` and syncs its directory; a missing file is not an error.
    public static func remove(_ path: String) throws(FleetdError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("remove \(path)") }
        syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Makes `path` a directory with `mode` (and its parents), root's when fleetd is root.
    public static func makeDirectory(_ path: String, mode: mode_t) throws(FleetdError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        } catch {
            throw FleetdError("cannot create \(path): \(error.localizedDescription)", hint: "fleetd runs as root")
        }
        chmod(path, mode)
    }

    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    private static func failure(_ what: String) -> FleetdError {
        FleetdError(
            "cannot \(what): \(String(cString: strerror(errno)))",
            hint: "fleetd runs as root with its state directory writable")
    }
}
