import Foundation

/// A process's claim to run in a Flatpak sandbox, and its verification against the system's
/// Flatpak installations (docs/THREAT-MODEL.md, "Sandboxed apps").
///
/// The portals read the app id from `/.flatpak-info` through `/proc/PID/root`. Where a user may
/// make user namespaces, that file is theirs to write (`bwrap --ro-bind fake /.flatpak-info`),
/// so here it is only a claim. What the user cannot forge is the code: the claim holds when the
/// process's executable is the very file (device and inode) at the app's deployment in an
/// installation an administrator owns (`/var/lib/flatpak/app/ID/…/files`, seen as `/app` inside),
/// and every file it maps executable is a root-owned system file (`ExecutableMappings`).
public enum FlatpakSandbox {
    /// The default system installation.
    public static let systemInstallation = "/var/lib/flatpak"

    /// What `/.flatpak-info` says.
    public struct Info: Sendable, Equatable {
        /// `[Application] name`: the Flatpak app id.
        public var name: String
        /// `[Instance] app-path`: where the app's files are deployed on the host.
        public var appPath: String
    }

    /// The outcome of checking a process.
    public enum Verdict: Sendable, Equatable {
        /// The process is the app `appId` of a system installation.
        case verified(appId: String)
        /// The process claims a sandbox that does not verify: why.
        case unverified(String)
    }

    /// Parses the key file `/.flatpak-info`; nil when it has no application name or app path.
    public static func parse(_ text: String) -> Info? {
        var group = ""
        var name: String?
        var appPath: String?
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if group == "Application" && key == "name" { name = value }
            if group == "Instance" && key == "app-path" { appPath = value }
        }
        guard let name, !name.isEmpty, let appPath, appPath.hasPrefix("/") else { return nil }
        return Info(name: name, appPath: appPath)
    }

    /// Checks `pid` against `installations`; nil when the process claims no Flatpak sandbox
    /// (no `/.flatpak-info` under its root).
    public static func verify(pid: Int32, installations: [String]) -> Verdict? {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read("/proc/\(pid)/root/.flatpak-info", limit: 1 << 16)
        } catch {
            if case .unreadable(_, let code) = error, code == ENOENT { return nil }
            return .unverified("its /.flatpak-info cannot be read (\(error))")
        }
        guard let text = String(validating: bytes, as: UTF8.self), let info = parse(text) else {
            return .unverified("its /.flatpak-info names no application and app path")
        }
        let app = "\"\(info.name)\""
        guard let deployment = canonical(info.appPath) else {
            return .unverified("the app path of \(app), \(info.appPath), does not exist on this system")
        }
        let inInstallation = installations.compactMap(canonical).contains { installation in
            deployment.hasPrefix(installation + "/app/" + info.name + "/")
        }
        guard inInstallation else {
            return .unverified(
                "the app path of \(app), \(deployment), is not in a system installation "
                    + "(\(installations.map { canonical($0) ?? $0 }.joined(separator: ", ")))")
        }
        let executable = ProcessInfoReader.executable(of: pid)
        guard executable.hasPrefix("/app/") else {
            return .unverified("its executable \(executable) is not one of the app's files (/app)")
        }
        let deployed = deployment + executable.dropFirst("/app".count)
        var running = stat()
        var installed = stat()
        guard stat("/proc/\(pid)/exe", &running) == 0, stat(deployed, &installed) == 0,
            running.st_dev == installed.st_dev, running.st_ino == installed.st_ino
        else {
            return .unverified("its executable is not \(deployed), the file \(app) deploys")
        }
        if let problem = ExecutableMappings.problem(pid: pid) { return .unverified(problem) }
        return .verified(appId: info.name)
    }

    /// `path` with every symbolic link resolved, or nil when it does not exist.
    static func canonical(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
