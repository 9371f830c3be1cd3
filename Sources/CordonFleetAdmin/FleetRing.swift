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

    /// Publishes the repository's `timestamp.json` on the doorbell subject of each server given and
    /// waits until the server has it. Returns the timestamp's version.
    public static func ring(
        workspace: String, servers: [String], seedFile: String?, caFile: String?
    ) throws(FleetAdminError) -> Int {
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
        do {
            let connection = try NATSConnection(options)
            defer { connection.close() }
            try connection.publish(FleetDoorbell.subject, bytes)
            try connection.flush()
        } catch {
            throw FleetAdminError(
                .io, "ringing \(servers.joined(separator: ", ")): \(error)",
                hint: "check the URL and that the server lists this workspace's NKey (`cordon fleet push-key`)")
        }
        return version
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
