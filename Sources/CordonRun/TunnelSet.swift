import CordonKit
import CordonProtocol
import Foundation

/// A run's `--tunnel` listeners in their own 0700 directory,
/// `$XDG_RUNTIME_DIR/cordon/tunnels/run-PID` (docs/CLI.md, "cordon run"), removed at the end.
public struct TunnelSet: Sendable {
    /// The run's directory of sockets, nil when there are no tunnels.
    let directory: String?
    let listeners: [TunnelListener]

    /// The variables the program gets: `CORDON_TUNNEL_<NAME>` and `CORDON_TUNNEL_<NAME>_TCP` per tunnel.
    public var environment: [String: String] {
        listeners.reduce(into: [:]) { result, listener in result.merge(listener.environment) { $1 } }
    }

    /// Listens for each of `tunnels` in a new directory under the runtime directory `environment`
    /// names; connections wait for `upstream` (the app's policy) and `gate` (the app's key), and
    /// what happens to each is told to `note`.
    public static func start(
        _ tunnels: [Tunnel], environment: [String: String], upstream: TunnelUpstream, gate: ChannelGate,
        note: @escaping RunNote
    ) async throws -> TunnelSet {
        guard !tunnels.isEmpty else { return TunnelSet(directory: nil, listeners: []) }
        let runtime = CordonPaths.resolve(environment: environment, uid: getuid()).runtimeDirectory
        let parent = runtime + "/tunnels"
        let directory = parent + "/run-\(getpid())"
        for path in [runtime, parent, directory] { try makePrivateDirectory(path) }
        var listeners: [TunnelListener] = []
        do {
            for tunnel in tunnels {
                listeners.append(
                    try await TunnelListener.start(
                        tunnel, directory: directory, upstream: upstream, gate: gate, note: note))
            }
        } catch {
            for listener in listeners { await listener.close() }
            rmdir(directory)
            throw error
        }
        return TunnelSet(directory: directory, listeners: listeners)
    }

    /// Closes every listener and removes the directory.
    public func close() async {
        for listener in listeners { await listener.close() }
        if let directory { rmdir(directory) }
    }

    /// Creates `path` mode 0700 when absent, and refuses one that is not a directory of this user's
    /// with no access for others (a symlink included).
    private static func makePrivateDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw ErrorText(
                "--tunnel: cannot create \(path): \(String(cString: strerror(errno)))",
                hint: "check XDG_RUNTIME_DIR")
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & 0o077 == 0
        else {
            throw ErrorText(
                "--tunnel: \(path) is not a private directory of this user's (mode 0700, owned by uid \(getuid()))",
                hint: "remove it or set XDG_RUNTIME_DIR to a directory of your own")
        }
    }
}
