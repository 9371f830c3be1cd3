import CordonFleet
import Foundation

/// A command an admin issues to one or more devices.
public struct FleetCommandRequest: Sendable {
    public var kind: FleetCommand.Kind
    /// The app a `wipeApp` erases.
    public var app: String?
    /// Device ids (64 hex characters, what `cordon-fleetd id` prints).
    public var devices: [String]
    /// How long the command may still be taken after it was issued.
    public var expiresIn: TimeInterval = 7 * 86_400
    /// The admin's words, shown in the audit log.
    public var reason: String?

    public init(
        kind: FleetCommand.Kind, app: String? = nil, devices: [String], expiresIn: TimeInterval = 7 * 86_400,
        reason: String? = nil
    ) {
        self.kind = kind
        self.app = app
        self.devices = devices
        self.expiresIn = expiresIn
        self.reason = reason
    }

    /// `id` in lower case if it is a device id (64 hex characters: SHA-256 of the device's key).
    public static func deviceID(_ id: String, source: String = "--device") throws(FleetAdminError) -> String {
        let trimmed = id.trimmingCharacters(in: .whitespaces)
        guard trimmed.utf8.count == 64, trimmed.unicodeScalars.allSatisfy(\.properties.isASCIIHexDigit) else {
            throw FleetAdminError(
                .usage, "\(source) \"\(trimmed)\" is not a device id (64 hex characters)",
                hint: "a device id is what `cordon-fleetd id` prints on that machine (SHA-256 of its device key)")
        }
        return trimmed.lowercased()
    }

    /// The device ids of a file, one per line (blank lines and `#` comments ignored).
    public static func deviceIDs(file path: String) throws(FleetAdminError) -> [String] {
        let text = String(decoding: try FleetFiles.read(path), as: UTF8.self)
        var out: [String] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let id = content.trimmingCharacters(in: .whitespacesAndNewlines)
            if id.isEmpty { continue }
            out.append(try deviceID(id, source: "\(path):\(index + 1):"))
        }
        guard !out.isEmpty else {
            throw FleetAdminError(.usage, "\(path) lists no device id", hint: "one device id per line")
        }
        return out
    }
}

/// What `command` issued.
public struct FleetIssueResult: Sendable {
    /// Each device and the counter its command got.
    public var counters: [(device: String, counter: Int)]
    public var expires: Date
    /// The key ids that signed the commands role.
    public var signers: [String]
    public var versions: [FleetRole: Int]
}

extension FleetWorkspace {
    /// Issues `request` to each device: the next counter of each from `fleet.json`, the device's
    /// command file keeps its commands not yet expired and adds this one; commands, snapshot and
    /// timestamp get new versions. `commandKeys` are further command key files (other admins');
    /// a wipe of more than one device needs the root's wipe threshold of distinct command keys.
    public mutating func issue(_ request: FleetCommandRequest, commandKeys: [String] = [], now: Date = Date())
        throws(FleetAdminError) -> FleetIssueResult
    {
        var devices: [String] = []
        for id in request.devices {
            let device = try FleetCommandRequest.deviceID(id)
            if !devices.contains(device) { devices.append(device) }
        }
        guard !devices.isEmpty else {
            throw FleetAdminError(.usage, "no device given", hint: "give --device ID (repeatable) or --devices FILE")
        }
        if request.kind == .wipeApp, (request.app ?? "").isEmpty {
            throw FleetAdminError(.usage, "wipe-app needs the app's id", hint: "e.g. --wipe-app com.example.mail")
        }
        // A machine reads its command file strictly, and canonical JSON writes a control character
        // raw: a reason or app id holding one would make the file unreadable on every machine.
        for (option, text) in [("--wipe-app", request.app), ("--reason", request.reason)] {
            guard let text, let control = CanonicalJSON.firstControlCharacter(in: text) else { continue }
            throw FleetAdminError(
                .usage,
                "\(option) holds a control character (\(CanonicalJSON.name(control))), "
                    + "which a machine's command file cannot carry",
                hint: "give \(option) on one line, without tabs")
        }
        guard request.expiresIn >= 60 else {
            throw FleetAdminError(.usage, "--expires-in is under a minute", hint: "e.g. --expires-in 7d")
        }
        return try transaction { (workspace) throws(FleetAdminError) -> FleetIssueResult in
            var signers: [String: TUFSigningKey] = [:]
            for path in commandKeys {
                let file = try workspace.checked(
                    FleetKeyFile.read(path), role: .commands, path: path, option: "--command-key")
                signers[file.keyID] = file.key
            }
            let state = workspace.ledger.role(.commands)
            for id in state.keyIDs where signers[id] == nil {
                let path = workspace.keyPath(.commands, id)
                if FleetFiles.exists(path) {
                    signers[id] = try workspace.checked(FleetKeyFile.read(path), role: .commands, path: path).key
                }
            }
            let wipeThreshold = workspace.ledger.wipeThreshold
            if request.kind.destroys, devices.count > 1, signers.count < wipeThreshold {
                throw FleetAdminError(
                    .threshold,
                    "a \(request.kind == .wipe ? "wipe" : "wipe-app") of \(devices.count) machines needs \(wipeThreshold) "
                        + "distinct command keys (the root's wipe threshold); \(signers.count) given",
                    hint: "add another admin's command key with --command-key FILE "
                        + "(`cordon fleet add-key \(workspace.directory) --role commands --out FILE` makes one)")
            }
            guard signers.count >= state.threshold else {
                throw FleetAdminError(
                    .key,
                    "the commands role needs \(state.threshold) key(s); \(signers.count) found in "
                        + "\(workspace.keysDirectory) or given with --command-key",
                    hint: "give --command-key FILE, or replace the key: "
                        + "`cordon fleet rotate \(workspace.directory) --role commands`")
            }

            var files: [String: [UInt8]] = [:]
            for (path, bytes) in try workspace.currentFiles(.commands) {
                guard let file = try? FleetCommandFile(bytes) else { continue }
                let live = file.commands.filter { $0.expires > now }
                if !live.isEmpty { files[path] = FleetCommandFile(device: file.device, commands: live).bytes }
            }
            let expires = now.addingTimeInterval(request.expiresIn)
            var counters: [(String, Int)] = []
            for device in devices {
                let path = FleetCommandFile.path(for: device)
                let previous = files[path].flatMap { try? FleetCommandFile($0) }
                let counter =
                    max(workspace.ledger.devices[device]?.counter ?? 0, previous?.commands.map(\.counter).max() ?? 0)
                    + 1
                let command = FleetCommand(
                    counter: counter, kind: request.kind, app: request.kind == .wipeApp ? request.app : nil,
                    issued: now, expires: expires, machines: devices.count, reason: request.reason)
                files[path] = FleetCommandFile(device: device, commands: (previous?.commands ?? []) + [command]).bytes
                workspace.ledger.devices[device] = FleetLedger.Device(
                    counter: counter, lastKind: request.kind.rawValue, lastIssued: TUFDate.format(now))
                counters.append((device, counter))
            }
            let keys = signers.keys.sorted().compactMap { signers[$0] }
            try workspace.commit(FleetRelease(commands: true, commandFiles: files, commandSigners: keys), now: now)
            // The same commands for the push channel (`cordon fleet ring` publishes them), signed by
            // the same keys: a machine verifies them against the delegation it trusts.
            for device in devices {
                guard let bytes = files[FleetCommandFile.path(for: device)], let file = try? FleetCommandFile(bytes)
                else { continue }
                let signed: [UInt8]
                do {
                    signed = try FleetPushedCommands.sign(file, with: keys)
                } catch {
                    throw FleetAdminError(
                        .key, "signing the pushed commands of \(device): \(error)", hint: "check keys/")
                }
                try FleetFiles.makeDirectory(workspace.pushDirectory, mode: 0o755)
                try FleetFiles.write(signed, to: workspace.pushDirectory + "/\(device).json", mode: 0o644)
            }
            var versions: [FleetRole: Int] = [:]
            for role in [FleetRole.commands, .snapshot, .timestamp] {
                versions[role] = workspace.ledger.role(role).version
            }
            return FleetIssueResult(
                counters: counters, expires: expires, signers: signers.keys.sorted(), versions: versions)
        }
    }
}
