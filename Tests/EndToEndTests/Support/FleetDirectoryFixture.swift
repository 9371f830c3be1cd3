import CordonFleet
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fleet directory as cordon-fleetd leaves it (docs/ARCHITECTURE.md, "Fleet commands in the
/// agent"): root's, 0755, `status.json` and `commands/<counter>.json` 0644. The test (root) writes
/// command files, standing in for fleetd.
final class FleetDirectoryFixture: Sendable {
    static let device = "sha256-e2e-device"
    let root: TemporaryDirectory
    var path: String { root.appending("fleet") }
    var commands: String { path + "/commands" }

    init() throws {
        root = try TemporaryDirectory()
        chmod(root.path, 0o755)
        try FileManager.default.createDirectory(atPath: commands, withIntermediateDirectories: true)
        chmod(path, 0o755)
        chmod(commands, 0o755)
    }

    /// Writes `status.json`, fresh until `staleAfter` (never verified when nil), atomically.
    func writeStatus(staleAfter: Date?, device: String = FleetDirectoryFixture.device) throws {
        let status = FleetHandoff.Status(
            device: device, repository: "https://fleet.example", verifiedAt: staleAfter.map { _ in Date() },
            freshUntil: staleAfter, staleAfter: staleAfter, versions: ["timestamp": 1], lastError: nil)
        try install(status.bytes, at: path + "/" + FleetHandoff.statusFile)
    }

    /// Writes command `counter` as fleetd would (`file`: under another counter's name instead).
    @discardableResult
    func write(
        _ counter: Int, _ kind: FleetCommand.Kind, app: String? = nil, device: String = FleetDirectoryFixture.device,
        file: Int? = nil, reason: String? = nil
    ) throws -> FleetCommand {
        let command = FleetCommand(
            counter: counter, kind: kind, app: app, issued: Date().addingTimeInterval(-60),
            expires: Date().addingTimeInterval(3600), reason: reason)
        let bytes = FleetHandoff.commandBytes(command, device: device, verifiedAt: Date())
        try install(bytes, at: commands + "/" + FleetHandoff.commandFileName(file ?? counter))
        return command
    }

    /// Written to a temporary name, 0644, then renamed into place (what fleetd does).
    private func install(_ bytes: [UInt8], at destination: String) throws {
        let temporary = destination + ".tmp"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        chmod(temporary, 0o644)
        guard rename(temporary, destination) == 0 else { throw POSIXError(.EIO) }
    }

    func remove() { root.remove() }
}

extension UserAgent {
    /// The audit records of `action` (`cordon audit --json`, run as the user).
    func auditRecords(_ action: String) async throws -> [[String: Any]] {
        let audit = try await cli(["audit", "--json", "--limit", "10000"])
        return audit.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["action"] as? String == action }
    }

    /// How many `fleet.command` records say `outcome` for command `counter`.
    func fleetRecords(_ counter: Int, _ outcome: String) async throws -> Int {
        try await auditRecords("fleet.command").filter {
            $0["outcome"] as? String == outcome
                && ($0["reason"] as? String)?.hasPrefix("fleet command #\(counter) ") == true
        }.count
    }
}
