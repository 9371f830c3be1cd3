import CordonFleet
import CordonNATS
import Foundation
import Logging
import Synchronization

/// fleetd's end of the push channel (docs/FLEET.md, "Push"): one NATS connection, made as this
/// machine (its NKey is the device key's public key, which signs the server's nonce: no other
/// secret), on which it listens for the doorbell. What arrives is handed to `onRing` untrusted;
/// `FleetDoorbell` judges it. Connecting is retried in the background with jittered backoff, so a
/// machine that starts offline joins when the server is reachable.
public final class FleetPush: Sendable {
    /// The largest ring handed on (a timestamp is far smaller; more is dropped unread).
    public static let maximumRing = TUFRefresh.Limits.timestamp
    let connection: NATSConnection

    let device: String

    /// The two subjects a machine follows.
    public enum Channel: String, Sendable, CaseIterable {
        /// `FleetDoorbell.subject`.
        case doorbell
        /// The machine's own command subject.
        case commands
    }

    /// Connects; `onRing` gets each doorbell ring, `onCommands` this machine's pushed command file:
    /// the one the stream kept, read at every (re)connection, then each published live. A message
    /// over its channel's limit is dropped unread (never queued) and told to `onOversized`.
    public convenience init(
        _ configuration: FleetdConfiguration.Push, key: FleetDeviceKey, logger: Logger,
        onRing: @escaping @Sendable ([UInt8]) -> Void, onCommands: @escaping @Sendable ([UInt8]) -> Void,
        onOversized: @escaping @Sendable (Channel, Int) -> Void = { _, _ in }
    ) throws(FleetdError) {
        try self.init(
            configuration, publicKey: key.publicKey, sign: { key.sign($0) }, logger: logger, onRing: onRing,
            onCommands: onCommands, onOversized: onOversized)
    }

    /// Connects as the machine whose device key is `publicKey` (`sign` signs with it), on
    /// `eventLoop` when given (the fleet swarm of `cordon-bench fleet`: thousands of machines in one
    /// process); `onEvent` also hears the connection's events.
    public init(
        _ configuration: FleetdConfiguration.Push, publicKey: [UInt8], sign: @escaping @Sendable ([UInt8]) -> [UInt8],
        eventLoop: (any NATSEventLoop)? = nil, logger: Logger,
        onRing: @escaping @Sendable ([UInt8]) -> Void, onCommands: @escaping @Sendable ([UInt8]) -> Void,
        onOversized: @escaping @Sendable (Channel, Int) -> Void = { _, _ in },
        onEvent: @escaping @Sendable (NATSEvent) -> Void = { _ in }
    ) throws(FleetdError) {
        let id = FleetDeviceKey.id(of: publicKey)
        device = id
        let subject = FleetPushedCommands.subject(for: id)
        // Set once connected: the (re)connection handler reads what the stream kept.
        let catchUp = CatchUp(subject: subject, logger: logger, onCommands: onCommands)
        var options = NATSOptions(servers: configuration.servers, name: "cordon-fleetd \(id.prefix(16))")
        options.nkey = NATSNKey.user(publicKey: publicKey)
        options.signer = sign
        options.caFile = configuration.caFile
        options.inboxPrefix = "_INBOX.\(id)"
        options.retryFirstConnect = true
        options.eventLoop = eventLoop
        do {
            connection = try NATSConnection(options) { event in
                switch event {
                case .error(let text): logger.warning("push: \(text)")
                case .connected, .reconnected:
                    logger.info("push: \(event)")
                    catchUp.run()
                default: logger.info("push: \(event)")
                }
                onEvent(event)
            }
            catchUp.attach(connection)
            try connection.subscribe(subject) { message in
                guard message.data.count <= FleetPushedCommands.maximumLength else {
                    logger.warning("push: a command file of \(message.data.count) bytes is dropped unread")
                    onOversized(.commands, message.data.count)
                    return
                }
                onCommands(message.data)
            }
            try connection.subscribe(FleetDoorbell.subject) { message in
                guard message.data.count <= Self.maximumRing else {
                    logger.warning("push: a ring of \(message.data.count) bytes is dropped unread")
                    onOversized(.doorbell, message.data.count)
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

    /// Publishes this machine's signed report on its report subject, kept by the reports stream
    /// (the fleet's compliance view); false (logged) when it was not stored: it goes again at the
    /// next poll.
    /// `acknowledged` false publishes without waiting for the stream's acknowledgement (the stream
    /// keeps it all the same; true only says it was sent).
    public func publishReport(_ report: [UInt8], logger: Logger, acknowledged: Bool = true) -> Bool {
        do {
            let subject = FleetPushedCommands.reportSubject(for: device)
            if acknowledged {
                try connection.publishToStream(subject, report)
            } else {
                try connection.publish(subject, report)
            }
            return true
        } catch {
            logger.warning("push: the report was not published: \(error)")
            return false
        }
    }
}

/// Reads the command file the stream kept for this machine, off the library's thread (a request
/// must not block the thread that delivers its reply), once per (re)connection.
final class CatchUp: Sendable {
    let subject: String
    let logger: Logger
    let onCommands: @Sendable ([UInt8]) -> Void
    /// The connection once made, and whether a (re)connection came before it was set.
    private let state = Mutex<(connection: NATSConnection?, pending: Bool)>((nil, false))

    init(subject: String, logger: Logger, onCommands: @escaping @Sendable ([UInt8]) -> Void) {
        self.subject = subject
        self.logger = logger
        self.onCommands = onCommands
    }

    /// The connection is made: a catch-up asked for before runs now.
    func attach(_ connection: NATSConnection) {
        let pending = state.withLock { value -> Bool in
            value.connection = connection
            defer { value.pending = false }
            return value.pending
        }
        if pending { start(connection) }
    }

    /// A (re)connection: read what the stream kept.
    func run() {
        let connection = state.withLock { value -> NATSConnection? in
            if value.connection == nil { value.pending = true }
            return value.connection
        }
        if let connection { start(connection) }
    }

    private func start(_ connection: NATSConnection) {
        // Off the library's thread, on the shared pool: a fleet swarm reconnecting thousands of
        // machines at once does not start a thread for each.
        DispatchQueue.global().async { [self] in
            do {
                if let kept = try connection.lastMessage(stream: FleetPushedCommands.stream, subject: subject) {
                    onCommands(kept.data)
                }
            } catch {
                logger.warning("push: what the stream kept could not be read: \(error)")
            }
        }
    }
}
