import CordonFleet
import Crypto
import Foundation

/// An admin's fleet workspace: `repository/` (exactly the files to upload: a TUF repository with
/// consistent snapshots), `fleet.json` (versions, expiries, keys, device counters) and `keys/`
/// (the online roles' private keys; root keys are meant to leave the machine). Every operation
/// holds the workspace's lock, reads `fleet.json` afresh, writes the repository's files atomically
/// in the order a client reads them backwards (targets, metadata, root, timestamp last), then
/// `fleet.json`.
public struct FleetWorkspace: Sendable {
    /// The workspace directory.
    public let directory: String
    /// The bookkeeping as last read or written.
    public internal(set) var ledger: FleetLedger

    /// The directory to upload.
    public var repository: String { directory + "/repository" }
    /// The private keys of the online roles.
    public var keysDirectory: String { directory + "/keys" }
    /// Each machine's signed commands for the push channel (`push/<device id>.json`, not uploaded).
    public var pushDirectory: String { directory + "/push" }
    var ledgerPath: String { directory + "/fleet.json" }

    /// The delegated role's name and the paths it is trusted for.
    static let commandPaths = ["commands/*"]

    /// Opens an existing workspace.
    public init(opening directory: String) throws(FleetAdminError) {
        self.directory = Self.normalized(directory)
        let path = self.directory + "/fleet.json"
        guard FleetFiles.exists(path) else {
            throw FleetAdminError(
                .workspace, "\(self.directory) is not a fleet workspace (no fleet.json)",
                hint: "create one with `cordon fleet init \(directory)`, or give the workspace directory")
        }
        ledger = try FleetLedger.decode(FleetFiles.read(path), path: path)
    }

    init(directory: String, ledger: FleetLedger) {
        self.directory = Self.normalized(directory)
        self.ledger = ledger
    }

    static func normalized(_ directory: String) -> String {
        var path = directory.isEmpty ? "." : directory
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Runs `body` under the workspace lock with `fleet.json` read afresh.
    mutating func transaction<T>(_ body: (inout FleetWorkspace) throws(FleetAdminError) -> T) throws(FleetAdminError)
        -> T
    {
        var copy = self
        let result = try FleetFiles.locked(directory) { () throws(FleetAdminError) -> T in
            copy.ledger = try FleetLedger.decode(FleetFiles.read(copy.ledgerPath), path: copy.ledgerPath)
            return try body(&copy)
        }
        self = copy
        return result
    }

    // MARK: Keys

    /// The workspace path of a key of `role` with id `keyID`.
    func keyPath(_ role: FleetRole, _ keyID: String) -> String {
        "\(keysDirectory)/\(role.rawValue)-\(keyID.prefix(8)).key"
    }

    /// The keys of `role` found in `keys/`, checked against `fleet.json`; at least the role's threshold.
    func onlineKeys(_ role: FleetRole) throws(FleetAdminError) -> [TUFSigningKey] {
        let state = ledger.role(role)
        var found: [TUFSigningKey] = []
        var looked: [String] = []
        for id in state.keyIDs {
            let path = keyPath(role, id)
            looked.append("keys/" + (path as NSString).lastPathComponent)
            guard FleetFiles.exists(path) else { continue }
            found.append(try checked(FleetKeyFile.read(path), role: role, path: path).key)
        }
        guard found.count >= state.threshold else {
            throw FleetAdminError(
                .key,
                "the \(role.rawValue) role needs \(state.threshold) key(s); \(found.count) found in \(keysDirectory) "
                    + "(looked for \(looked.joined(separator: ", ")))",
                hint: "restore the key file from a backup, or replace the key: "
                    + "`cordon fleet rotate \(directory) --role \(role.rawValue)`")
        }
        return found
    }

    /// `file` if it is a key of `role` this repository lists; else a typed error naming `path`.
    func checked(_ file: FleetKeyFile, role: FleetRole, path: String, option: String? = nil) throws(FleetAdminError)
        -> FleetKeyFile
    {
        let given = option.map { "\($0) " } ?? ""
        guard file.role == role else {
            throw FleetAdminError(
                .key, "\(given)\(path) is a \(file.role.rawValue) key, not a \(role.rawValue) key",
                hint: "give the \(role.rawValue) key file (its name starts with `\(role.rawValue)-`)")
        }
        guard ledger.role(role).keyIDs.contains(file.keyID) else {
            throw FleetAdminError(
                .key,
                "\(given)\(path): key \(file.keyID.prefix(8)) is not one of this repository's \(role.rawValue) keys "
                    + "(\(ledger.role(role).keyIDs.map { String($0.prefix(8)) }.joined(separator: ", ")))",
                hint: "`cordon fleet status \(directory)` lists the key ids of each role")
        }
        return file
    }

    /// Registers a new key of `role` in the ledger (not yet in any role's list).
    mutating func register(_ key: TUFSigningKey, role: FleetRole) {
        ledger.keys[key.publicKey.id] = FleetLedger.Key(
            role: role, publicKey: TUFHex.encode(key.publicKey.ed25519 ?? []))
    }

    /// Reads `--root-key` files and checks that they, with `extra` (new keys made here), reach the
    /// threshold of the current root and of `next` (the root about to be signed).
    func rootSigners(_ paths: [String], next: FleetLedger, extra: [TUFSigningKey]) throws(FleetAdminError)
        -> [TUFSigningKey]
    {
        let current = ledger.role(.root)
        var upcoming = next.role(.root)
        upcoming.version = current.version + 1
        var signers: [String: TUFSigningKey] = [:]
        for key in extra { signers[key.publicKey.id] = key }
        for path in paths {
            let file = try FleetKeyFile.read(path)
            guard file.role == .root else {
                throw FleetAdminError(
                    .key, "--root-key \(path) is a \(file.role.rawValue) key, not a root key",
                    hint: "give the offline root key files `cordon fleet init` wrote (keys/root-XXXXXXXX.key)")
            }
            guard current.keyIDs.contains(file.keyID) || upcoming.keyIDs.contains(file.keyID) else {
                throw FleetAdminError(
                    .key,
                    "--root-key \(path): key \(file.keyID.prefix(8)) is not a root key of root v\(current.version) "
                        + "(\(current.keyIDs.map { String($0.prefix(8)) }.joined(separator: ", ")))",
                    hint: "`cordon fleet status \(directory)` lists the root key ids")
            }
            signers[file.keyID] = file.key
        }
        let old = signers.keys.filter { current.keyIDs.contains($0) }.count
        guard old >= current.threshold else {
            throw FleetAdminError(
                .threshold,
                "root v\(upcoming.version) must be signed by \(current.threshold) of root v\(current.version)'s keys; "
                    + "\(old) given",
                hint: "give --root-key FILE for each (the offline root keys; `cordon fleet status \(directory)` "
                    + "lists their ids)")
        }
        let new = signers.keys.filter { upcoming.keyIDs.contains($0) }.count
        guard new >= upcoming.threshold else {
            throw FleetAdminError(
                .threshold,
                "root v\(upcoming.version) must be signed by \(upcoming.threshold) of its own keys; \(new) given",
                hint: "give --root-key FILE for each of the new root's keys")
        }
        return signers.keys.sorted().compactMap { signers[$0] }
    }
}
