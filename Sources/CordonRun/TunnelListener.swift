import CordonKit
import CordonLocking
import CordonProtocol
import CordonSystem
import Foundation
import NIOCore
import NIOPosix

/// Serves one `--tunnel` (docs/ARCHITECTURE.md, "Pinned channel"): a Unix socket (mode 0600, in a
/// 0700 directory of its own) and a loopback TCP port, which serves only sockets of the user's uid
/// (`SocketOwner`; any other connection is closed at once, its uid on stderr). Each accepted
/// connection gets a verified TLS connection to the upstream, then bytes are relayed both ways. No connection while the app's key
/// is unavailable (the local one is closed at once and the reason logged); open ones are cut on
/// revocation (`ChannelGate`); a bad upstream closes only its own connection, with the reason on stderr.
final class TunnelListener: Sendable {
    let tunnel: Tunnel
    /// The Unix socket's path.
    let socketPath: String
    /// The loopback TCP port.
    let port: Int
    private let servers: [any Channel]

    private init(tunnel: Tunnel, socketPath: String, port: Int, servers: [any Channel]) {
        self.tunnel = tunnel
        self.socketPath = socketPath
        self.port = port
        self.servers = servers
    }

    /// The environment the program gets for this tunnel.
    var environment: [String: String] {
        [tunnel.unixVariable: "unix:\(socketPath)", tunnel.tcpVariable: "127.0.0.1:\(port)"]
    }

    /// Listens for `tunnel` in `directory` (which must exist, mode 0700); connections wait for
    /// `upstream` to hold a connector (the app's policy) and for `gate` to be open; each refused or
    /// failed connection is told to `note`.
    static func start(
        _ tunnel: Tunnel, directory: String, upstream: TunnelUpstream, gate: ChannelGate, note: @escaping RunNote,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> TunnelListener {
        let socketPath = directory + "/" + tunnel.name + ".sock"
        guard socketPath.utf8.count < 108 else {
            throw ErrorText(
                "--tunnel \(tunnel.name): the socket path \(socketPath) is too long for a Unix socket",
                hint: "set XDG_RUNTIME_DIR (or CORDON_RUNTIME_DIR) to a shorter directory", exit: .usage)
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .childChannelOption(.autoRead, value: false)
            // Half-close passes through the relay (`GlueHandler`).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { child in
                Task { await relay(child, tunnel: tunnel, upstream: upstream, gate: gate, note: note) }
                // What a client sends (and its half-close) before the relay is glued is held.
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(EarlyInputBuffer(), name: EarlyInputBuffer.name)
                }
            }
        // Created 0600 from the start: no moment where another user could connect.
        let previous = umask(0o177)
        let unix: any Channel
        do {
            unix = try await bootstrap.bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true).get()
        } catch {
            umask(previous)
            throw error
        }
        umask(previous)
        let tcp = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        return TunnelListener(
            tunnel: tunnel, socketPath: socketPath, port: tcp.localAddress?.port ?? 0, servers: [unix, tcp])
    }

    /// Stops listening and removes the socket.
    func close() async {
        for server in servers { try? await server.close() }
        unlink(socketPath)
    }

    /// Why the loopback connection `local` is not the user's, or nil when it is (or came in on
    /// the Unix socket, which only the user can reach). The loopback port carries no credentials:
    /// the kernel's socket diagnostics name the connecting socket's owner, and only the uid the
    /// tunnel runs as is served; an owner that cannot be read is refused too.
    static func stranger(_ local: any Channel) -> String? {
        if case .unixDomainSocket = local.remoteAddress { return nil }
        // The port is bound on 127.0.0.1 only: anything else is not a connection it should have.
        guard case .v4(let peer) = local.remoteAddress, case .v4(let own) = local.localAddress else {
            return "\(local.remoteAddress.map { "\($0)" } ?? "an unknown address") is not a loopback IPv4 peer"
        }
        let user = getuid()
        do {
            let owner = try SocketOwner.uid(connectingFrom: peer.address, to: own.address)
            return owner == user
                ? nil : "127.0.0.1:\(local.remoteAddress?.port ?? 0) belongs to uid \(owner), not uid \(user)"
        } catch {
            return "the owner of 127.0.0.1:\(local.remoteAddress?.port ?? 0) cannot be read (\(error))"
        }
    }

    private static func relay(
        _ local: any Channel, tunnel: Tunnel, upstream: TunnelUpstream, gate: ChannelGate, note: @escaping RunNote
    ) async {
        let label = "cordon: tunnel \(tunnel.name)"
        if let stranger = stranger(local) {
            note("\(label): connection refused: \(stranger)")
            local.close(promise: nil)
            return
        }
        if let refusal = gate.refusal {
            note("\(label): connection refused: \(refusal)")
            local.close(promise: nil)
            return
        }
        guard let connector = upstream.connector else {
            note("\(label): connection refused: \(upstream.missing)")
            local.close(promise: nil)
            return
        }
        do {
            let connection = try await connector.connectVerified(
                host: tunnel.host, port: tunnel.port, on: local.eventLoop)
            let remote = connection.channel
            let id: Int
            do {
                let policed = connection.policed(
                    systemRootsPath: connector.verifier.systemRootsPath, now: connector.verifier.now)
                id = try gate.open(policed: policed) { error in
                    note("\(label): \(error)")
                    local.close(promise: nil)
                    remote.close(promise: nil)
                }
            } catch {
                note("\(label): connection refused: \(error)")
                remote.close(promise: nil)
                local.close(promise: nil)
                return
            }
            local.closeFuture.and(remote.closeFuture).whenComplete { _ in gate.close(id) }
            try await local.eventLoop.submit {
                try remote.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
                let (inner, outer) = GlueHandler.matchedPair()
                try local.pipeline.syncOperations.addHandler(inner)
                try remote.pipeline.syncOperations.addHandler(outer)
                ChannelConnector.release(remote)
                local.pipeline.syncOperations.removeHandler(name: EarlyInputBuffer.name, promise: nil)
                local.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in local.close(promise: nil) }
            }.get()
        } catch {
            note("\(label): \(tunnel.host):\(tunnel.port): \(error)")
            local.close(promise: nil)
        }
    }
}

/// The connector of a run's tunnels, set once the app's network policy is known and anew on
/// every policy change (docs/ARCHITECTURE.md, "Pinned channel").
public final class TunnelUpstream: Sendable {
    private let value = Locked<(connector: ChannelConnector?, missing: String)>(
        (nil, "the app's network policy is not loaded yet"))

    /// None yet.
    public init() {}

    /// The connector, once set.
    public var connector: ChannelConnector? { value.withLock { $0.connector } }

    /// Why there is no connector (when there is none).
    public var missing: String { value.withLock { $0.missing } }

    /// Sets the connector every later connection uses.
    public func set(_ connector: ChannelConnector) { value.withLock { $0 = (connector, "") } }

    /// Sets the connector of `policy`; a policy the channel cannot use leaves no connector (new
    /// connections refused with the reason) and is thrown.
    public func set(policy: NetworkPolicy) throws(SecureChannelError) {
        do {
            set(try ChannelConnector(verifier: ChannelVerifier(policy: policy), alpn: []))
        } catch {
            refuse("the app's network policy cannot be used: \(error)")
            throw error
        }
    }

    /// Leaves no connector: new connections are refused with `reason`.
    public func refuse(_ reason: String) { value.withLock { $0 = (nil, reason) } }
}
