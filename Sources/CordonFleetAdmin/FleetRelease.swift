import CordonFleet
import CordonProtocol
import Crypto
import Foundation

/// What one operation changes: which roles get a new version, the new target files, and who signs.
struct FleetRelease {
    /// A new root version, signed by `rootSigners` (the ledger already holds its keys and thresholds).
    var root = false
    var targets = false
    var commands = false
    var snapshot = false
    /// The policy targets (`policies/<name>` → bytes) when they change; else the current ones.
    var policies: [String: [UInt8]]?
    /// The command targets (`commands/<device>.json` → bytes) when they change; else the current ones.
    var commandFiles: [String: [UInt8]]?
    var rootSigners: [TUFSigningKey] = []
    /// The command keys that sign `commands` (default: the role's keys in `keys/`).
    var commandSigners: [TUFSigningKey]?
}

extension FleetWorkspace {
    /// `repository/N.role.json`.
    func metadataPath(_ role: FleetRole, _ version: Int) -> String {
        "\(repository)/\(version).\(role.rawValue).json"
    }

    /// The current metadata file of `role`.
    func currentMetadata(_ role: FleetRole) throws(FleetAdminError) -> [UInt8] {
        let path = role == .timestamp ? "\(repository)/timestamp.json" : metadataPath(role, ledger.role(role).version)
        do {
            return try FleetFiles.read(path)
        } catch {
            throw FleetAdminError(
                .repository, "\(path) is missing: fleet.json names \(role.rawValue) v\(ledger.role(role).version)",
                hint: "the repository directory was changed outside `cordon fleet`; restore it from a backup")
        }
    }

    /// The targets `role` (targets or commands) lists now, path → bytes, each read from
    /// `repository/targets/` and checked against its hash.
    func currentFiles(_ role: FleetRole) throws(FleetAdminError) -> [String: [UInt8]] {
        let metadata = try currentMetadata(role)
        let file = "\(ledger.role(role).version).\(role.rawValue).json"
        let targets: TUFTargets
        do {
            targets = try TUFTargets(metadata, role: role.rawValue)
        } catch {
            throw FleetAdminError.metadata(error, file: file)
        }
        var out: [String: [UInt8]] = [:]
        for (path, target) in targets.targets {
            let served = "\(repository)/\(target.servedPath)"
            let bytes = try FleetFiles.read(served)
            do {
                try target.verify(bytes)
            } catch {
                throw FleetAdminError.metadata(error, file: served)
            }
            out[path] = bytes
        }
        return out
    }

    /// Where a consistent-snapshot repository serves the target `path` with `bytes`.
    static func servedPath(_ path: String, _ bytes: [UInt8]) -> String {
        let digest = TUFHex.encode(SHA256Digest.of(bytes))
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let name = parts.last.map(String.init) ?? path
        let directory = parts.dropLast().joined(separator: "/")
        return "targets/" + (directory.isEmpty ? "" : directory + "/") + "\(digest).\(name)"
    }

    /// Signs the roles `release` names at their next versions, then the timestamp, and writes every
    /// file: new targets, delegated and top-level targets, snapshot, root, timestamp, `fleet.json`.
    /// Returns the repository paths written.
    @discardableResult
    mutating func commit(_ release: FleetRelease, now: Date) throws(FleetAdminError) -> [String] {
        var plan: [(path: String, bytes: [UInt8])] = []
        func expiry(_ role: FleetRole) -> Date { now.addingTimeInterval(Double(ledger.role(role).expirySeconds)) }
        func bump(_ role: FleetRole) -> (version: Int, expires: Date) {
            let expires = expiry(role)
            ledger.update(role) {
                $0.version += 1
                $0.expires = TUFDate.format(expires)
            }
            return (ledger.role(role).version, expires)
        }
        func sign(_ signed: JSONValue, _ keys: [TUFSigningKey], _ file: String) throws(FleetAdminError) -> [UInt8] {
            do {
                return try TUFWriter.sign(signed, with: keys)
            } catch {
                throw FleetAdminError(.repository, "cannot sign \(file): \(error)", hint: "report this")
            }
        }
        func addTargets(_ files: [String: [UInt8]]) {
            for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
                let served = Self.servedPath(path, bytes)
                if !FleetFiles.exists("\(repository)/\(served)") { plan.append((served, bytes)) }
            }
        }

        let commandsBytes: [UInt8]
        if release.commands {
            let files: [String: [UInt8]]
            if let given = release.commandFiles { files = given } else { files = try currentFiles(.commands) }
            let signers: [TUFSigningKey]
            if let given = release.commandSigners { signers = given } else { signers = try onlineKeys(.commands) }
            try checkPendingWipes(files, signers: signers.count, now: now)
            let (version, expires) = bump(.commands)
            let file = "\(version).commands.json"
            commandsBytes = try sign(TUFWriter.targets(version: version, expires: expires, files: files), signers, file)
            addTargets(files)
            plan.append((file, commandsBytes))
        } else {
            commandsBytes = try currentMetadata(.commands)
        }

        let targetsBytes: [UInt8]
        if release.targets {
            let files: [String: [UInt8]]
            if let given = release.policies { files = given } else { files = try currentFiles(.targets) }
            let signers = try onlineKeys(.targets)
            let commands = ledger.role(.commands)
            let delegation = TUFWriter.Delegation(
                name: FleetRole.commands.rawValue, keys: ledger.publicKeys(.commands), threshold: commands.threshold,
                paths: Self.commandPaths)
            let (version, expires) = bump(.targets)
            let file = "\(version).targets.json"
            targetsBytes = try sign(
                TUFWriter.targets(version: version, expires: expires, files: files, delegations: [delegation]), signers,
                file)
            addTargets(files)
            plan.append((file, targetsBytes))
        } else {
            targetsBytes = try currentMetadata(.targets)
        }

        let snapshotBytes: [UInt8]
        if release.snapshot || release.targets || release.commands {
            let signers = try onlineKeys(.snapshot)
            let (version, expires) = bump(.snapshot)
            let file = "\(version).snapshot.json"
            let roles: [String: (version: Int, bytes: [UInt8])] = [
                "targets": (ledger.role(.targets).version, targetsBytes),
                "commands": (ledger.role(.commands).version, commandsBytes),
            ]
            snapshotBytes = try sign(
                TUFWriter.snapshot(version: version, expires: expires, roles: roles), signers, file)
            plan.append((file, snapshotBytes))
        } else {
            snapshotBytes = try currentMetadata(.snapshot)
        }

        if release.root {
            let (version, expires) = bump(.root)
            let file = "\(version).root.json"
            let bytes = try sign(ledger.rootSigned(expires: expires), release.rootSigners, file)
            plan.append((file, bytes))
            plan.append(("root.json", bytes))
        }

        let timestampSigners = try onlineKeys(.timestamp)
        let (version, expires) = bump(.timestamp)
        let timestamp = TUFWriter.timestamp(
            version: version, expires: expires, snapshot: snapshotBytes, snapshotVersion: ledger.role(.snapshot).version
        )
        plan.append(("timestamp.json", try sign(timestamp, timestampSigners, "timestamp.json")))

        for (path, bytes) in plan {
            let target = "\(repository)/\(path)"
            let previous = path == "timestamp.json" ? FleetFiles.modificationSecond(target) : nil
            try FleetFiles.write(bytes, to: target)
            // HTTP servers make a static file's ETag from its modification second and size: every
            // timestamp gets a later second than the one before, or two of equal size written in one
            // second would share an ETag and machines polling with If-None-Match would hear 304.
            if let previous { FleetFiles.setModificationSecond(target, atLeast: previous + 1) }
        }
        try FleetFiles.write(ledger.encoded(), to: ledgerPath, mode: 0o600)
        return plan.map(\.path)
    }

    /// Refuses to sign `commands` with fewer keys than the wipe threshold while it still lists a
    /// live wipe of more than one device: a machine that has not taken it yet would refuse it.
    func checkPendingWipes(_ files: [String: [UInt8]], signers: Int, now: Date) throws(FleetAdminError) {
        guard signers < ledger.wipeThreshold else { return }
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
            guard let file = try? FleetCommandFile(bytes) else { continue }
            for command in file.commands
            where command.kind.destroys && command.machines > 1 && command.expires > now {
                throw FleetAdminError(
                    .threshold,
                    "\(path) still lists a \(command.kind.rawValue) of \(command.machines) machines "
                        + "(counter \(command.counter), expires \(TUFDate.format(command.expires))): the commands role "
                        + "must be signed by \(ledger.wipeThreshold) command keys until then; \(signers) given",
                    hint: "give --command-key FILE for the other admins' command keys, or wait until it expires")
            }
        }
    }
}

/// SHA-256 of bytes.
enum SHA256Digest {
    static func of(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}
