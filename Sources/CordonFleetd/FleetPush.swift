import CordonFleet
import CordonNATS
import Foundation
import Logging

/// fleetd's end of the push channel (docs/FLEET.md, "Push"): one NATS connection, made as this
/// machine (its NKey is the device key's public key, which signs the server's nonce: no other
/// secret), on which it listens for the doorbell. What arrives is handed to `onRing` untrusted;
/// `FleetDoorbell` judges it. Connecting is retried in the background with jittered backoff, so a
/// machine that starts offline joins when the server is reachable.
public final class FleetPush: Sendable {
    /// The largest ring handed on (a timestamp is far smaller; more is dropped unread).
    public static let maximumRing = TUFRefresh.Limits.timestamp
    let connection: NATSConnection

    public init(
        _ configuration: FleetdConfiguration.Push, key: FleetDeviceKey, logger: Logger,
        onRing: @escaping @Sendable ([UInt8]) -> Void
    ) throws(FleetdError) {
        var options = NATSOptions(servers: configuration.servers, name: "cordon-fleetd \(key.id.prefix(16))")
        options.nkey = Self.nkey(of: key)
        options.signer = { key.sign($0) }
        options.caFile = configuration.caFile
        options.inboxPrefix = "_INBOX.\(key.id)"
        options.retryFirstConnect = true
        do {
            connection = try NATSConnection(options) { event in
                switch event {
                case .error(let text): logger.warning("push: \(text)")
                default: logger.info("push: \(event)")
                }
            }
            try connection.subscribe(FleetDoorbell.subject) { message in
                guard message.data.count <= Self.maximumRing else {
                    logger.warning("push: a ring of \(message.data.count) bytes is dropped unread")
                    return
                }
                onRing(message.data)
            }
        } catch {
            throw FleetdError("push: \(error)", hint: "check /push in the fleet settings and the NATS server")
        }
    }

    /// The machine's NATS user key (`cordon-fleetd id --verbose` prints it for the server's list).
    public static func nkey(of key: FleetDeviceKey) -> String { NATSNKey.user(publicKey: key.publicKey) }

    /// Closes the connection.
    public func close() { connection.close() }
}
