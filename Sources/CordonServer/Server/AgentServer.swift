import CordonLocking
import CordonProtocol
import CordonStore
import CordonSystem
import CordonTransport
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The agent's Unix-socket server: binds the socket and owns the loop, the pool and the agent.
public final class AgentServer: Sendable {
    public let configuration: AgentConfiguration
    private let group: MultiThreadedEventLoopGroup
    private let storePool: NIOThreadPool
    /// The agent, reachable only on its loop (`agent.value` checks that it is).
    let agent: NIOLoopBound<Agent>
    /// The one event loop: the agent's, and every connection's.
    let loop: any EventLoop
    let logger: Logger
    private let channel = Locked<(any Channel)?>(nil)
    /// The path this server bound itself (nil when serving a socket-activated one).
    private let boundSocketPath = Locked<String?>(nil)
    /// `finish()` ran.
    private let finished = Locked(false)

    /// Opens the database and prepares the agent; `start()` binds the socket. `clock` is the
    /// agent's time (Unix seconds); tests inject one they move.
    public init(
        configuration: AgentConfiguration, logger: Logger,
        clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) throws {
        self.configuration = configuration
        self.logger = logger
        // The user's alone at every start, not only when created: data and config 0700, the
        // database and its WAL and shared-memory files 0600.
        let paths = configuration.paths
        var tightened: [String] = []
        for directory in [paths.dataDirectory, paths.configDirectory] {
            if let change = try PrivateDirectory.enforce(directory, uid: configuration.allowedUID) {
                tightened.append(change.description)
            }
        }
        let database = try CordonDatabase(path: paths.databasePath)
        tightened += database.permissionsTightened
        for change in tightened {
            logger.warning("tightened a permission that let others in", metadata: ["change": "\(change)"])
        }
        // One loop serves every connection: the agent's state needs no locks.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        storePool = NIOThreadPool(numberOfThreads: 1)
        storePool.start()
        let loop = group.next()
        self.loop = loop
        // The store thread yields the CPU to the loop, which answers every client
        // (docs/PERFORMANCE.md, "Cold reads and the other clients").
        let lowered = try storePool.runIfActive(eventLoop: loop) {
            ThreadPriority.lowerCurrentThread(by: Self.storeThreadNiceSteps)
        }.wait()
        if lowered == nil { logger.notice("the store thread keeps the loop's priority: the kernel refused") }
        agent = try loop.submit { [storePool] in
            NIOLoopBound(
                try Agent(
                    loop: loop, configuration: configuration, database: database, storePool: storePool, logger: logger,
                    clock: clock),
                eventLoop: loop)
        }.wait()
    }

    /// How many nice steps the store thread runs below the loop: under contention CFS gives it
    /// about a third of the loop's share (weights 335 against 1024), and all of an idle CPU.
    static let storeThreadNiceSteps: Int32 = 5

    /// The socket path clients connect to.
    public var socketPath: String { configuration.paths.socketPath }

    /// Serves the socket systemd passed (socket activation) or else binds its own (0600 in a
    /// 0700 directory), and starts accepting.
    public func start() async throws {
        let paths = configuration.paths
        let agent = self.agent
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Inherited by every accepted socket before a client can write on it, so the kernel
            // names the writer of everything read (KernelSenders; set on the accepted socket alone,
            // what a client wrote between the accept and that call would carry no writer).
            .serverChannelOption(
                ChannelOptions.Types.SocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SO_PASSCRED), value: 1
            )
            .serverChannelInitializer { [logger] in AcceptErrorLogger.install(on: $0, logger: logger) }
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // It frames its own reads (no ByteToMessageHandler): one step less per call.
                    try channel.pipeline.syncOperations.addHandler(AgentConnectionHandler(agent: agent.value))
                }
            }
        let listening: String
        if let activated = try SocketActivation.takeListeningSocket() {
            // systemd owns this socket (its path, mode and lifetime): serve it, never unlink it.
            // systemd made the directory (DirectoryMode=0700); tighten it all the same if it is ours.
            if FileManager.default.fileExists(atPath: paths.runtimeDirectory) {
                logTightened(try RuntimeDirectory.prepare(paths.runtimeDirectory, uid: configuration.allowedUID))
            }
            try await recoverAuditJournal()
            let served = try await bootstrap.withBoundSocket(activated.descriptor).get()
            channel.withLock { $0 = served }
            listening = activated.path ?? "fd \(activated.descriptor)"
            logger.notice(
                "serving the socket passed by systemd (socket activation)",
                metadata: ["socket": "\(listening)", "fd": "\(activated.descriptor)"])
        } else {
            logTightened(try RuntimeDirectory.prepare(paths.runtimeDirectory, uid: configuration.allowedUID))
            try RuntimeDirectory.claimSocketPath(paths.socketPath)
            // No other agent serves this user now (the path was free): its journal is ours to replay.
            try await recoverAuditJournal()
            // The socket is made 0600 right after bind; until then the 0700 directory keeps others out.
            let bound = try await bootstrap.bind(unixDomainSocketPath: paths.socketPath).get()
            chmod(paths.socketPath, 0o600)
            channel.withLock { $0 = bound }
            boundSocketPath.withLock { $0 = paths.socketPath }
            listening = paths.socketPath
        }
        logger.notice("listening", metadata: ["socket": "\(listening)", "database": "\(paths.databasePath)"])
    }

    /// Stores what the last agent's journal of routine reads holds and the database lacks (it was
    /// killed before their group commit; docs/RELIABILITY.md, "Audit"), before anything is served.
    private func recoverAuditJournal() async throws {
        let agent = self.agent
        let database = try await loop.submit { agent.value.database }.get()
        let path = configuration.paths.dataDirectory + "/" + AuditJournal.fileName
        let stored = try AuditJournal.recover(path: path, database: database)
        if stored > 0 {
            logger.notice(
                "audit records of routine reads stored from the journal of an agent that stopped before storing them",
                metadata: ["records": "\(stored)"])
        }
    }

    private func logTightened(_ change: PermissionChange?) {
        guard let change else { return }
        logger.warning("tightened a permission that let others in", metadata: ["change": "\(change)"])
    }

    /// A one-line status for the service manager.
    public func statusLine() async throws -> String {
        let agent = self.agent
        return try await loop.submit { Self.statusLine(of: agent.value) }.get()
    }

    /// The status line, computed on the agent's loop.
    static func statusLine(of agent: Agent) -> String {
        let status = agent.status(now: agent.clock())
        return "state: \(status.state.rawValue), apps: \(status.apps)"
    }

    /// Stops accepting, revokes (zeroing every key and telling every app), closes everything:
    /// `stopServing()`, then `finish()`.
    public func stop() async throws {
        try await stopServing()
        await finish()
    }

    /// Stops accepting, revokes (zeroing every key and telling every app) and closes every
    /// connection; the loop keeps running for the services still stopping (`finish()` ends it).
    public func stopServing() async throws {
        let listener = channel.withLock { value -> (any Channel)? in
            defer { value = nil }
            return value
        }
        try? await listener?.close()
        let agent = self.agent
        try await loop.flatSubmit { agent.value.shutdown() }.get()
        // Only a server that bound the socket removes it: never another agent's live socket, nor
        // the one systemd passed.
        if listener != nil, let path = boundSocketPath.withLock({ $0 }) { unlink(path) }
    }

    /// Ends the loop and the pool, once every service that reaches the agent has returned (a task
    /// submitted to a loop already shut down never completes). The components are stopped first
    /// when `stopServing()` never ran (a start that failed: nothing was served, so nothing is
    /// revoked, audited or unlinked); the store work already queued finishes and its completions
    /// run, so none reaches the agent once it is freed. Idempotent.
    public func finish() async {
        let first = finished.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let agent = self.agent
        try? await loop.submit { agent.value.stopComponents() }.get()
        try? await storePool.shutdownGracefully()
        try? await loop.submit {}.get()  // After the completions the pool queued on the loop.
        try? await group.shutdownGracefully()
        logger.notice("stopped")
    }
}
