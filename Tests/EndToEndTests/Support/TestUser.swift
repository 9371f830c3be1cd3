import Foundation

/// The ordinary user the suites run Cordon as: `cordon-test`, a system account without a home or
/// a shell, made the first time a test needs it (`useradd`; the tests run as root). Everything
/// of Cordon's a test starts as this user — cordond, the CLI, the apps, the attacker — runs
/// through ``asUser`` (docs/THREAT-MODEL.md: root bypasses the very checks under test).
enum TestUser {
    static let name = "cordon-test"

    /// The user's uid and primary gid, made on first use.
    static let ids: (uid: String, gid: String) = {
        if let ids = lookUp() { return ids }
        _ = run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        // Another test process may have made it meanwhile: either way it exists now.
        guard let ids = lookUp() else { fatalError("could not make the test user \(name)") }
        return ids
    }()

    static var uid: String { ids.uid }
    static var gid: String { ids.gid }

    /// `setpriv` as the user, with its groups: the prefix of every command run as it.
    static var asUser: [String] { ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups"] }

    private static func lookUp() -> (uid: String, gid: String)? {
        let (uidStatus, uid) = run("/usr/bin/id", ["-u", name])
        let (gidStatus, gid) = run("/usr/bin/id", ["-g", name])
        guard uidStatus == 0, gidStatus == 0 else { return nil }
        let trimmed = { (text: String) in text.trimmingCharacters(in: .whitespacesAndNewlines) }
        return (trimmed(uid), trimmed(gid))
    }

    private static func run(_ path: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
