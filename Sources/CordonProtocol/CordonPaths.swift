/// Where Cordon keeps its files, resolved from flags, environment and XDG defaults.
///
/// Order for each directory: explicit override, then `CORDON_*_DIR`, then the XDG variable
/// plus `cordon`, then the XDG fallback under `HOME` (runtime: `/run/user/UID`).
public struct CordonPaths: Sendable, Equatable {
    /// Holds the socket (`agent.sock`); mode 0700.
    public var runtimeDirectory: String
    /// Holds the SQLite database.
    public var dataDirectory: String
    /// Holds user policy and settings.
    public var configDirectory: String

    public init(runtimeDirectory: String, dataDirectory: String, configDirectory: String) {
        self.runtimeDirectory = runtimeDirectory
        self.dataDirectory = dataDirectory
        self.configDirectory = configDirectory
    }

    /// The socket path.
    public var socketPath: String { runtimeDirectory + "/agent.sock" }
    /// The database path.
    public var databasePath: String { dataDirectory + "/cordon.sqlite" }

    /// Resolves the paths from `environment` (and optional explicit overrides).
    public static func resolve(
        environment: [String: String], uid: UInt32, runtime: String? = nil, data: String? = nil,
        config: String? = nil
    ) -> CordonPaths {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        func pick(_ override: String?, _ cordonVariable: String, _ xdgVariable: String, _ fallback: String) -> String {
            if let override, !override.isEmpty { return override }
            if let value = environment[cordonVariable], !value.isEmpty { return value }
            if let value = environment[xdgVariable], !value.isEmpty { return value + "/cordon" }
            return fallback
        }
        return CordonPaths(
            runtimeDirectory: pick(runtime, "CORDON_RUNTIME_DIR", "XDG_RUNTIME_DIR", "/run/user/\(uid)/cordon"),
            dataDirectory: pick(data, "CORDON_DATA_DIR", "XDG_DATA_HOME", home + "/.local/share/cordon"),
            configDirectory: pick(config, "CORDON_CONFIG_DIR", "XDG_CONFIG_HOME", home + "/.config/cordon"))
    }

    /// The socket a client should connect to: `CORDON_SOCKET` if set, else the resolved default.
    public static func clientSocketPath(environment: [String: String], uid: UInt32) -> String {
        if let socket = environment["CORDON_SOCKET"], !socket.isEmpty { return socket }
        return resolve(environment: environment, uid: uid).socketPath
    }
}
