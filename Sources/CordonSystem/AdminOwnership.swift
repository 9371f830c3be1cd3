import Foundation

/// Whether a file is administered: root's, and out of reach of every other user.
public enum AdminOwnership {
    /// What makes `path` unsafe to trust, or nil: the file (after symbolic links) must be a
    /// regular file owned by root, not writable by group or others (and executable when
    /// `executable`); every directory above it, and above the link itself, root's and not
    /// writable by group or others unless sticky.
    public static func problem(with path: String, executable: Bool) -> String? {
        guard let real = realpath(path, nil) else { return "cannot be resolved: \(String(cString: strerror(errno)))" }
        let resolved = String(cString: real)
        free(real)
        var info = stat()
        guard stat(resolved, &info) == 0 else { return "cannot be read: \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "is not a regular file" }
        if let problem = ownership(info, of: resolved, directory: false) { return problem }
        if executable && info.st_mode & S_IXUSR == 0 { return "is not executable" }
        // The directories that hold the file, and those that hold the link naming it.
        let holding = [resolved, path].map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        for directory in holding[0] == holding[1] ? [holding[0]] : holding {
            if let problem = directoriesProblem(from: directory) { return problem }
        }
        return nil
    }

    /// What makes the directory `path` unsafe to take administered files from, or nil: it (after
    /// symbolic links) must be owned by root and not writable by group or others (sticky or not:
    /// anyone could add a file), and so must every directory above it (sticky ones allowed there).
    public static func problem(withDirectory path: String) -> String? {
        guard let real = realpath(path, nil) else { return "cannot be resolved: \(String(cString: strerror(errno)))" }
        let resolved = String(cString: real)
        free(real)
        var info = stat()
        guard stat(resolved, &info) == 0 else { return "cannot be read: \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "is not a directory" }
        if let problem = ownership(info, of: resolved, directory: false) { return problem }
        guard resolved != "/" else { return nil }
        return directoriesProblem(from: URL(fileURLWithPath: resolved).deletingLastPathComponent().path)
    }

    /// Checks `directory` and each one above it up to `/`.
    private static func directoriesProblem(from directory: String) -> String? {
        guard let real = realpath(directory, nil) else { return "is in \(directory), which cannot be resolved" }
        var current = String(cString: real)
        free(real)
        while true {
            var info = stat()
            guard stat(current, &info) == 0 else { return "is in \(current), which cannot be read" }
            if let problem = ownership(info, of: current, directory: true) { return problem }
            if current == "/" { return nil }
            current = URL(fileURLWithPath: current).deletingLastPathComponent().path
        }
    }

    private static func ownership(_ info: stat, of path: String, directory: Bool) -> String? {
        let prefix = directory ? "is in \(path), which " : ""
        guard info.st_uid == 0 else { return prefix + "is not owned by root (uid \(info.st_uid))" }
        let writable = info.st_mode & (S_IWGRP | S_IWOTH) != 0
        let sticky = info.st_mode & S_ISVTX != 0
        if writable && !(directory && sticky) { return prefix + "is writable by group or others" }
        return nil
    }
}
