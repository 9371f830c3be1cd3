import ArgumentParser
import CordonFleetAdmin

/// `cordon fleet status DIR`.
struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each role's version, expiry, keys and threshold, the policies, and each machine's counter.")

    @OptionGroup var workspace: FleetWorkspaceArgument

    func run() async throws {
        let fleet = try workspace.open()
        let status = try fleet.status()
        var rows: [[String]] = [["role", "version", "expires", "threshold", "keys (* in keys/)"]]
        for role in status.roles {
            let keys = role.keyIDs.map { FleetFormat.keyID($0) + (role.keysHere.contains($0) ? "*" : "") }
            rows.append([
                role.role.rawValue, "v\(role.version)", role.expires + (role.expired ? " (EXPIRED)" : ""),
                "\(role.threshold) of \(role.keyIDs.count)", keys.joined(separator: " "),
            ])
        }
        for line in Format.table(rows) { try Output.line(line) }
        try Output.line("wipe threshold: \(status.wipeThreshold) command key(s)")
        try Output.line("policies: " + (status.policies.isEmpty ? "none" : status.policies.joined(separator: " ")))
        try Output.line("devices: \(status.devices.count)")
        for line in Format.table(
            status.devices.map { ["  " + $0.id, "counter \($0.counter)", $0.lastKind, $0.lastIssued] })
        {
            try Output.line(line)
        }
    }
}
