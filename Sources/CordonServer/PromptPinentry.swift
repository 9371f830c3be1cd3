import Foundation

/// The pinentry program the implicit-unlock prompt runs: the `"pinentry"` of the admin settings
/// file (`/etc/cordon/settings.json`), else `pinentry` on a fixed system path. Never `$PINENTRY`
/// or the user's `settings.json`: a program running as the user can write those, and would get
/// the passcode typed into a prompt the agent showed (docs/ARCHITECTURE.md, "Components").
///
/// Both the settings file and the program must be administered: owned by root, not writable by
/// group or others, in directories that are too (up to `/`; a sticky directory such as `/tmp`
/// may be writable by others).
enum PromptPinentry {
    /// Where `pinentry` is looked for when the admin settings name none.
    static let systemPath = ["/usr/local/bin", "/usr/bin", "/bin"]

    /// The settings file's key.
    static let settingsKey = "pinentry"

    /// The program to run, or the reason none can be (for `UnlockUnavailable`).
    static func resolve(adminSettings: String, searchPath: [String] = systemPath) -> Result<String, Problem> {
        if let data = FileManager.default.contents(atPath: adminSettings) {
            if let problem = AdminOwnership.problem(with: adminSettings, executable: false) {
                return .failure(Problem("\(adminSettings) \(problem)"))
            }
            let object = try? JSONSerialization.jsonObject(with: data)
            guard let settings = object as? [String: Any] else {
                return .failure(Problem("\(adminSettings) is not a JSON object"))
            }
            if let value = settings[settingsKey] {
                guard let program = value as? String, program.hasPrefix("/") else {
                    return .failure(Problem("\(adminSettings): \"\(settingsKey)\" must be an absolute path"))
                }
                if let problem = AdminOwnership.problem(with: program, executable: true) {
                    return .failure(Problem("the pinentry \(program) (from \(adminSettings)) \(problem)"))
                }
                return .success(program)
            }
        }
        for directory in searchPath {
            let candidate = directory + "/pinentry"
            guard FileManager.default.fileExists(atPath: candidate) else { continue }
            if let problem = AdminOwnership.problem(with: candidate, executable: true) {
                return .failure(Problem("the pinentry \(candidate) \(problem)"))
            }
            return .success(candidate)
        }
        return .failure(
            Problem(
                "no pinentry: \(adminSettings) names none and none is installed in "
                    + searchPath.joined(separator: ":")))
    }

    /// Why no pinentry can be run.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Whether a file is administered: root's, and out of reach of every other user.
enum AdminOwnership {
    /// What makes `path` unsafe to trust, or nil: the file (after symbolic links) must be a
    /// regular file owned by root, not writable by group or others (and executable when
    /// `executable`); every directory above it, and above the link itself, root's and not
    /// writable by group or others unless sticky.
    static func problem(with path: String, executable: Bool) -> String? {
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
