import CordonFleet
import CordonNATS
import Crypto
import Foundation

/// The admin's end of the push channel (docs/FLEET.md, "Push"): the workspace's NATS key
/// (`keys/push.nk`, an NKey user seed in the form NATS tools read) and the doorbell, rung with the
/// repository's current `timestamp.json`. A ring carries no trust: machines verify the timestamp
/// and then poll the repository, so only what was uploaded there takes effect.
public enum FleetRing {
    /// The workspace's NATS key file.
    public static func keyPath(workspace: String) -> String { workspace + "/keys/push.nk" }

    /// Makes the workspace's NATS key when there is none (0600) and returns its public NKey, the
    /// user to list in the NATS server's configuration with publish rights on the doorbell.
    public static func pushKey(workspace: String) throws(FleetAdminError) -> (nkey: String, created: Bool) {
        let path = keyPath(workspace: workspace)
        if FleetFiles.exists(path) { return (try options(seedFile: path, servers: []).nkey ?? "", false) }
        guard FleetFiles.exists(workspace + "/keys") else {
            throw FleetAdminError(
                .workspace, "\(workspace) has no keys/ directory", hint: "run `cordon fleet init` first")
        }
        let key = Curve25519.Signing.PrivateKey()
        try FleetFiles.write(
            Array((NATSNKey.userSeed(Array(key.rawRepresentation)) + "\n").utf8), to: path, mode: 0o600)
        return (NATSNKey.user(publicKey: Array(key.publicKey.rawRepresentation)), true)
    }

    /// What a ring sent.
    public struct Rung: Sendable {
        /// The timestamp's version.
        public var version: Int
        /// The machines whose new signed commands were published to their subjects.
        public var commands: [String]
    }

    /// Publishes each machine's signed commands that changed since the last ring to its subject
    /// (kept by the commands stream, made or updated here), then the repository's `timestamp.json`
    /// on the doorbell subject, and waits until the server has them.
    public static func ring(
        workspace: String, servers: [String], seedFile: String?, caFile: String?
    ) throws(FleetAdminError) -> Rung {
        guard !servers.isEmpty else {
            throw FleetAdminError(.usage, "no NATS server given", hint: "pass --nats tls://HOST:4222")
        }
        let path = workspace + "/repository/timestamp.json"
        let bytes = try FleetFiles.read(path)
        let version: Int
        do {
            version = try TUFTimestamp(bytes).version
        } catch {
            throw FleetAdminError(.repository, "\(path): \(error)", hint: "run `cordon fleet timestamp` first")
        }
        var options = try options(seedFile: seedFile ?? keyPath(workspace: workspace), servers: servers)
        options.caFile = caFile
        let ringedPath = workspace + "/push/.ringed.json"
        var ringed: [String: String] = [:]
        if FleetFiles.exists(ringedPath) {
            ringed =
                (try? JSONDecoder().decode([String: String].self, from: Data(try FleetFiles.read(ringedPath)))) ?? [:]
        }
        var changed: [(device: String, bytes: [UInt8], digest: String)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workspace + "/push")) ?? []
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let device = String(name.dropLast(5))
            let file = try FleetFiles.read(workspace + "/push/" + name)
            let digest = TUFHex.encode(SHA256.hash(data: file))
            if ringed[device] != digest { changed.append((device, file, digest)) }
        }
        do {
            let connection = try NATSConnection(options)
            defer { connection.close() }
            if !changed.isEmpty { try makeStreams(on: connection) }
            for (device, file, digest) in changed {
                try connection.publishToStream(FleetPushedCommands.subject(for: device), file)
                ringed[device] = digest
            }
            try connection.publish(FleetDoorbell.subject, bytes)
            try connection.flush()
        } catch {
            try? FleetFiles.write(Array((try? JSONEncoder().encode(ringed)) ?? Data()), to: ringedPath, mode: 0o644)
            throw FleetAdminError(
                .io, "ringing \(servers.joined(separator: ", ")): \(error)",
                hint: "check the URL and that the server lists this workspace's NKey (`cordon fleet push-key`)")
        }
        try FleetFiles.write(Array((try? JSONEncoder().encode(ringed)) ?? Data()), to: ringedPath, mode: 0o644)
        return Rung(version: version, commands: changed.map(\.device))
    }

    /// Makes or updates the two streams: each machine's last command file, and its last report.
    public static func makeStreams(on connection: NATSConnection) throws(NATSError) {
        for (name, subjects) in [
            (FleetPushedCommands.stream, FleetPushedCommands.subjects),
            (FleetPushedCommands.reportStream, FleetPushedCommands.reportSubjects),
        ] {
            var stream = NATSConnection.StreamConfiguration(name: name, subjects: [subjects])
            stream.maxMessagesPerSubject = 1
            stream.maxMessageSize = Int32(FleetPushedCommands.maximumLength)
            try connection.addStream(stream)
        }
    }

    static func options(seedFile: String, servers: [String]) throws(FleetAdminError) -> NATSOptions {
        guard FleetFiles.exists(seedFile) else {
            throw FleetAdminError(
                .key, "\(seedFile) does not exist", hint: "run `cordon fleet push-key DIR` to make it")
        }
        var options = NATSOptions(servers: servers, name: "cordon fleet ring")
        let text = String(decoding: try FleetFiles.read(seedFile), as: UTF8.self)
        guard options.identify(seed: text) else {
            throw FleetAdminError(
                .key, "\(seedFile) is not an NKey user seed (SU…)", hint: "make one with `cordon fleet push-key DIR`")
        }
        return options
    }
}
