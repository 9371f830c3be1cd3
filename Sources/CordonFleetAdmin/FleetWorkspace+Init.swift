import CordonFleet
import Foundation

/// How `init` sets up a repository.
public struct FleetInitOptions: Sendable {
    /// How many root keys, and how many of them must sign a new root.
    public var rootKeys = 1
    public var rootThreshold = 1
    /// How many command keys must sign a wipe of more than one device.
    public var wipeThreshold = 2
    /// Seconds each role's metadata stays valid after signing (default: `FleetRole.defaultExpiry`).
    public var expiry: [FleetRole: Double] = [:]

    public init() {}
}

/// What `init` made.
public struct FleetInitResult: Sendable {
    public var workspace: FleetWorkspace
    /// Each key file written, with its role, in role order.
    public var keyFiles: [(role: FleetRole, path: String)]
    /// The repository files written.
    public var files: [String]
}

extension FleetWorkspace {
    /// Creates a workspace in `directory` (created when missing; refused when it already holds
    /// `fleet.json`): one key per role (`rootKeys` for root), root v1, empty targets and commands v1,
    /// snapshot v1, timestamp v1.
    public static func create(at directory: String, options: FleetInitOptions = FleetInitOptions(), now: Date = Date())
        throws(FleetAdminError) -> FleetInitResult
    {
        let directory = normalized(directory)
        guard options.rootKeys >= 1, (1...options.rootKeys).contains(options.rootThreshold) else {
            throw FleetAdminError(
                .usage, "--root-threshold \(options.rootThreshold) with \(options.rootKeys) root key(s)",
                hint: "the threshold must be between 1 and the number of root keys")
        }
        guard options.wipeThreshold >= 1 else {
            throw FleetAdminError(
                .usage, "--wipe-threshold \(options.wipeThreshold) is not 1 or more", hint: "e.g. --wipe-threshold 2")
        }
        for (role, seconds) in options.expiry where seconds < 60 {
            throw FleetAdminError(
                .usage, "the \(role.rawValue) expiry (\(Int(seconds)) s) is under a minute", hint: "e.g. 1d, 30d, 365d")
        }
        if FleetFiles.exists(directory + "/fleet.json") {
            throw FleetAdminError(
                .workspace, "\(directory) is already a fleet workspace",
                hint: "use `cordon fleet status \(directory)`, or init another directory")
        }
        try FleetFiles.makeDirectory(directory, mode: 0o755)
        try FleetFiles.makeDirectory(directory + "/keys", mode: 0o700)
        try FleetFiles.makeDirectory(directory + "/repository", mode: 0o755)

        var ledger = FleetLedger(wipeThreshold: options.wipeThreshold, roles: [:], keys: [:])
        var workspace = FleetWorkspace(directory: directory, ledger: ledger)
        var keyFiles: [(FleetRole, String)] = []
        var rootSigners: [TUFSigningKey] = []
        for role in FleetRole.allCases {
            let count = role == .root ? options.rootKeys : 1
            var ids: [String] = []
            for _ in 0..<count {
                let file = FleetKeyFile(role: role, key: TUFSigningKey())
                let path = "\(directory)/keys/\(file.fileName)"
                try file.write(to: path)
                keyFiles.append((role, path))
                workspace.register(file.key, role: role)
                ids.append(file.keyID)
                if role == .root { rootSigners.append(file.key) }
            }
            ledger = workspace.ledger
            ledger.roles[role.rawValue] = FleetLedger.Role(
                version: 0, expires: "", expirySeconds: Int(options.expiry[role] ?? role.defaultExpiry),
                threshold: role == .root ? options.rootThreshold : 1, keyIDs: ids)
            workspace.ledger = ledger
        }
        let files = try FleetFiles.locked(directory) { () throws(FleetAdminError) -> [String] in
            try workspace.commit(
                FleetRelease(
                    root: true, targets: true, commands: true, snapshot: true, policies: [:], commandFiles: [:],
                    rootSigners: rootSigners),
                now: now)
        }
        return FleetInitResult(workspace: workspace, keyFiles: keyFiles, files: files)
    }
}
