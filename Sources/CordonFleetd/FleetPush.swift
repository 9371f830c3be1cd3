import CordonFleet
import CordonLocking
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
    /// process); `onEvent` also hears the connection's events; `runBlocking` runs the catch-up's
    /// blocking reads (a thread of their own, unless a pool is given).
    public init(
        _ configuration: FleetdConfiguration.Push, publicKey: [UInt8], sign: @escaping @Sendable ([UInt8]) -> [UInt8],
        eventLoop: (any NATSEventLoop)? = nil, logger: Logger,
        onRing: @escaping @Sendable ([UInt8]) -> Void, onCommands: @escaping @Sendable ([UInt8]) -> Void,
        onOversized: @escaping @Sendable (Channel, Int) -> Void = { _, _ in },
        onEvent: @escaping @Sendable (NATSEvent) -> Void = { _ in },
        runBlocking: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { Thread.detachNewThread($0) }
    ) throws(FleetdError) {
        let id = FleetDeviceKey.id(of: publicKey)
        device = id
        let subject = FleetPushedCommands.subject(for: id)
        // Set once connected: the (re)connection handler reads what the stream kept.
        let catchUp = CatchUp(subject: subject, logger: logger, onCommands: onCommands, runBlocking: runBlocking)
        var options = NATSOptions(servers: configuration.servers, name: "cordon-fleetd \(id.prefix(16))")
        options.nkey = NATSNKey.user(publicKey: publicKey)
        options.signer = sign
        options.caFile = configuration.caFile
        options.inboxPrefix = "_INBOX.\(id)"
        options.retryFirstConnect = true
        options.reconnectBase = configuration.reconnectWindowSeconds
        options.reconnectCap = max(60, configuration.reconnectWindowSeconds)
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
/// must not block the thread that delivers its reply), once per (re)connection. A read that fails
/// (the server's JetStream still starting after a restart) is tried again with jittered backoff
/// until it succeeds or a newer (re)connection reads instead: a command kept while the machine was
/// away is never left unread.
final class CatchUp: Sendable {
    let subject: String
    let logger: Logger
    let onCommands: @Sendable ([UInt8]) -> Void
    let runBlocking: @Sendable (@escaping @Sendable () -> Void) -> Void

    private struct State {
        var connection: NATSConnection?
        /// A (re)connection came before the connection was set.
        var pending = false
        /// Counts (re)connections: a read of an older one gives up.
        var round = 0
    }

    private let state = Locked(State())

    init(
        subject: String, logger: Logger, onCommands: @escaping @Sendable ([UInt8]) -> Void,
        runBlocking: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.subject = subject
        self.logger = logger
        self.onCommands = onCommands
        self.runBlocking = runBlocking
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
        let round = state.withLock { value -> Int in
            value.round += 1
            return value.round
        }
        runBlocking { [self] in read(connection, round: round, attempt: 0) }
    }

    private func read(_ connection: NATSConnection, round: Int, attempt: Int) {
        guard state.withLock({ $0.round == round }) else { return }
        do {
            if let kept = try connection.lastMessage(stream: FleetPushedCommands.stream, subject: subject) {
                onCommands(kept.data)
            }
        } catch  where !error.isClosed {
            let delay = min(30, 0.25 * Double(1 << min(attempt, 7))) * Double.random(in: 0.5..<1)
            logger.warning(
                "push: what the stream kept could not be read: \(error); again in \(String(format: "%.1f", delay)) s")
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
                runBlocking { [self] in read(connection, round: round, attempt: attempt + 1) }
            }
        } catch {
            return
        }
    }
}
