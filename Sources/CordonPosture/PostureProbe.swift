import CordonProtocol
import Foundation

/// Reads the device's posture (docs/ARCHITECTURE.md, "Posture"). Every file is read under `root`
/// (`/` on a machine, a fixture tree in tests) and with a bound; what only a program can tell
/// (the desktop's screen lock, the user's desktop session) comes from `command`, injected
/// likewise. A file that is absent, unreadable or garbled, or a setting the machine gives no
/// evidence for, makes its check `unknown` with what is missing, never a pass and never a crash.
public struct PostureProbe: Sendable {
    /// Runs a program and returns its standard output, or nil when it cannot run or fails.
    public typealias CommandRunner = @Sendable (_ program: String, _ arguments: [String]) -> String?

    public let root: String
    public let minimums: PostureMinimums
    /// The user whose desktop session counts for `screenLock` (the agent's own).
    public let uid: UInt32
    let command: CommandRunner

    /// A probe of the tree at `root`, for the user `uid`.
    public init(
        root: String = "/", minimums: PostureMinimums = PostureMinimums(), uid: UInt32 = getuid(),
        command: @escaping CommandRunner
    ) {
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
        self.minimums = minimums
        self.uid = uid
        self.command = command
    }

    /// Every check, in `PostureCheck` order.
    public func run() -> [PostureResult] {
        PostureCheck.allCases.map(run)
    }

    /// One check.
    public func run(_ check: PostureCheck) -> PostureResult {
        switch check {
        case .secureBoot: secureBoot()
        case .kernelLockdown: kernelLockdown()
        case .diskEncryption: DiskEncryption(probe: self).result()
        case .screenLock: screenLock()
        case .kernelTaint: kernelTaint()
        case .ptraceScope: ptraceScope()
        case .osVersion: osVersion()
        case .kernelVersion: kernelVersion()
        }
    }

    /// The text of `path` under the root (at most 64 KiB), or nil.
    func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: root + path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 1 << 16) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// The bytes of `path` under the root (at most 4 KiB), or nil.
    func bytes(_ path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: root + path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4096)).map { Array($0) }
    }

    func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: root + path)
    }

    static let secureBootVariable =
        "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e00e98032b8c"

    func secureBoot() -> PostureResult {
        if let value = bytes(Self.secureBootVariable) {
            // Four bytes of attributes, then the value.
            guard value.count == 5 else {
                return PostureResult(
                    .secureBoot, .unknown, "\(Self.secureBootVariable) has \(value.count) bytes, not 5")
            }
            return value[4] == 1
                ? PostureResult(.secureBoot, .pass, "SecureBoot EFI variable: 1")
                : PostureResult(.secureBoot, .fail, "SecureBoot EFI variable: \(value[4])")
        }
        if exists("/sys/firmware/efi") {
            return PostureResult(.secureBoot, .unknown, "an EFI system without a readable SecureBoot variable")
        }
        if exists("/sys/firmware") {
            return PostureResult(.secureBoot, .fail, "booted without UEFI (no /sys/firmware/efi): no Secure Boot")
        }
        return PostureResult(.secureBoot, .unknown, "/sys/firmware is not available")
    }

    func kernelLockdown() -> PostureResult {
        let path = "/sys/kernel/security/lockdown"
        guard let text = read(path)?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            return PostureResult(
                .kernelLockdown, .unknown,
                exists(path) ? missing(path) : "\(path) is absent (no securityfs or lockdown LSM)")
        }
        guard let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]") else {
            return PostureResult(.kernelLockdown, .unknown, "\(path): no mode selected in \"\(text)\"")
        }
        let mode = text[text.index(after: open)..<close]
        return PostureResult(.kernelLockdown, mode == "none" ? .fail : .pass, "\(path): \(text)")
    }

    /// The desktop's `lock-enabled`, counted only with evidence that it is in effect: a dconf
    /// database sets it (the user's or the system's, `dconf read`), or the user has a graphical
    /// session (logind's display session of type x11, wayland or mir), where the desktop applies
    /// GSettings' default. Without either, `gsettings` answers only the schema's default (`true`
    /// in GNOME's), which no desktop applies: `unknown`.
    func screenLock() -> PostureResult {
        let key = "org.gnome.desktop.screensaver lock-enabled"
        guard let output = command("gsettings", ["get", "org.gnome.desktop.screensaver", "lock-enabled"]) else {
            return PostureResult(
                .screenLock, .unknown, "no desktop setting to read (gsettings is missing or has no GNOME schema)")
        }
        let value = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard value == "true" || value == "false" else {
            return PostureResult(.screenLock, .unknown, "gsettings answered \"\(value)\" for \(key)")
        }
        let stored = command("dconf", ["read", "/org/gnome/desktop/screensaver/lock-enabled"])?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let source: String
        if let stored, !stored.isEmpty {
            source = "set in a dconf database"
        } else if let session = graphicalSession() {
            source = "GSettings' default in the user's \(session)"
        } else {
            return PostureResult(
                .screenLock, .unknown,
                "\(key) is \(value) only by GSettings' default: no dconf database sets it and the user has no desktop session"
            )
        }
        return PostureResult(.screenLock, value == "true" ? .pass : .fail, "\(key): \(value) (\(source))")
    }

    /// The user's graphical session, as logind tells it (`loginctl`): its display session when
    /// its type is x11, wayland or mir ("wayland session 2"), else nil.
    func graphicalSession() -> String? {
        guard
            let display = command("loginctl", ["show-user", String(uid), "--property=Display", "--value"])?
                .trimmingCharacters(in: .whitespacesAndNewlines), !display.isEmpty,
            display.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        let type = command("loginctl", ["show-session", display, "--property=Type", "--value"])?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard let type, ["x11", "wayland", "mir"].contains(type) else { return nil }
        return "\(type) session \(display)"
    }

    func kernelTaint() -> PostureResult {
        let path = "/proc/sys/kernel/tainted"
        guard let text = read(path)?.trimmingCharacters(in: .whitespacesAndNewlines), let mask = UInt64(text) else {
            return PostureResult(.kernelTaint, .unknown, read(path) == nil ? missing(path) : "\(path) is garbled")
        }
        guard mask != 0 else { return PostureResult(.kernelTaint, .pass, "\(path): 0") }
        return PostureResult(.kernelTaint, .fail, "\(path): \(mask) (\(KernelTaint.describe(mask)))")
    }

    func ptraceScope() -> PostureResult {
        let path = "/proc/sys/kernel/yama/ptrace_scope"
        guard let text = read(path)?.trimmingCharacters(in: .whitespacesAndNewlines), let scope = Int(text) else {
            return PostureResult(
                .ptraceScope, .unknown,
                read(path) != nil
                    ? "\(path) is garbled"
                    : exists(path) ? missing(path) : "\(path) is absent (Yama is not enabled)")
        }
        return PostureResult(.ptraceScope, scope >= 1 ? .pass : .fail, "\(path): \(scope)")
    }

    func osVersion() -> PostureResult {
        guard let text = read("/etc/os-release") ?? read("/usr/lib/os-release") else {
            return PostureResult(.osVersion, .unknown, "no os-release")
        }
        let fields = OSRelease.parse(text)
        let id = fields["ID"] ?? "linux"
        guard let version = fields["VERSION_ID"] else {
            return PostureResult(.osVersion, .unknown, "os-release of \(id) has no VERSION_ID")
        }
        guard let minimum = minimums.osVersions[id] else {
            return PostureResult(.osVersion, .pass, "\(id) \(version) (no minimum set for \(id))")
        }
        let ok = VersionNumber(version) >= VersionNumber(minimum)
        return PostureResult(.osVersion, ok ? .pass : .fail, "\(id) \(version), minimum \(minimum)")
    }

    func kernelVersion() -> PostureResult {
        let path = "/proc/sys/kernel/osrelease"
        guard let release = read(path)?.trimmingCharacters(in: .whitespacesAndNewlines), !release.isEmpty else {
            return PostureResult(.kernelVersion, .unknown, missing(path))
        }
        guard let minimum = minimums.kernel else {
            return PostureResult(.kernelVersion, .pass, "kernel \(release) (no minimum set)")
        }
        let ok = VersionNumber(release) >= VersionNumber(minimum)
        return PostureResult(.kernelVersion, ok ? .pass : .fail, "kernel \(release), minimum \(minimum)")
    }
}

extension PostureProbe {
    /// The names in the directory `path` under the root, sorted; empty when there is none.
    func list(_ path: String) -> [String] {
        listing(path) ?? []
    }

    /// The names in the directory `path` under the root, sorted; nil when it cannot be listed.
    func listing(_ path: String) -> [String]? {
        (try? FileManager.default.contentsOfDirectory(atPath: root + path))?.sorted()
    }

    /// Why `path` gave no text: absent, or there and not readable (no permission, not a file).
    func missing(_ path: String) -> String {
        exists(path) ? "\(path) exists but cannot be read" : "\(path) is absent"
    }

    /// Runs `program` from `PATH` with no input and returns its output when it exits 0 within two
    /// seconds (it is killed after that) — the command runner a probe of this machine uses.
    public static let systemCommand: CommandRunner = { program, arguments in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { if process.isRunning { kill(pid, SIGKILL) } }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
