import CordonProtocol
import Foundation

/// A connection to the agent for users and tools: status, passcode, lock, apps.
///
/// ```swift
/// let client = try await CordonClient.connect()
/// try await client.unlock(passcode: "2468")
/// print(try await client.status().state)
/// ```
public final class CordonClient: Sendable {
    /// The socket this client is connected to.
    public let socketPath: String
    let connection: VarlinkClientConnection

    private init(socketPath: String, connection: VarlinkClientConnection) {
        self.socketPath = socketPath
        self.connection = connection
    }

    /// Connects to the agent at `socketPath`, or the default path (`CORDON_SOCKET`, then
    /// `$XDG_RUNTIME_DIR/cordon/agent.sock`).
    public static func connect(socketPath: String? = nil) async throws(CordonClientError) -> CordonClient {
        let path = socketPath ?? CordonSocket.defaultPath
        return CordonClient(socketPath: path, connection: try await .connect(path: path))
    }

    /// The agent's state, attempt counter and settings.
    public func status() async throws -> AgentStatus {
        try await connection.call(.getStatus, NoParameters(), returning: StatusReply.self).status
    }

    /// Sets the first passcode; the container stays locked until `unlock`. Returns the recovery key
    /// (48 digits in 8 groups), which the agent gives only here: show it to the user once.
    @discardableResult
    public func initialize(passcode: String) async throws -> String? {
        try await connection.call(
            .initialize, InitializeParameters(passcode: passcode), returning: InitializeReply.self
        ).recoveryKey
    }

    /// Restores with the recovery key (a TPM cleared or replaced, the database on another machine):
    /// sets `passcode` and returns the new recovery key; the one given no longer works.
    public func recover(recoveryKey: String, passcode: String) async throws -> String {
        try await connection.call(
            .recover, RecoverParameters(recoveryKey: recoveryKey, passcode: passcode), returning: RecoverReply.self
        ).recoveryKey
    }

    /// Unlocks; `nil` works within the re-authentication grace.
    public func unlock(passcode: String?) async throws {
        _ = try await connection.call(.unlock, UnlockParameters(passcode: passcode), returning: NoParameters.self)
    }

    /// Locks the container.
    public func lock() async throws {
        _ = try await connection.call(.lock, NoParameters(), returning: NoParameters.self)
    }

    /// Revokes the key: every app is told and must halt.
    public func logout() async throws {
        _ = try await connection.call(.logout, NoParameters(), returning: NoParameters.self)
    }

    /// Re-wraps the master key under a new passcode.
    public func changePasscode(old: String, new: String) async throws {
        _ = try await connection.call(
            .changePasscode, ChangePasscodeParameters(old: old, new: new), returning: NoParameters.self)
    }

    /// Crypto-erases the container; the passcode is required (`CordonError.passcodeRequired`
    /// without it, `wrongPasscode` when it is wrong, which counts as a failed attempt).
    public func wipe(passcode: String) async throws {
        _ = try await connection.call(
            .wipe, WipeParameters(confirm: true, passcode: passcode), returning: NoParameters.self)
    }

    /// The registered apps and their compliance.
    public func apps() async throws -> [AppInfo] {
        try await connection.call(.listApps, NoParameters(), returning: ListAppsReply.self).apps
    }

    /// The device's posture: every check with its evidence (`io.cordon.Posture.Get`).
    public func posture() async throws -> [PostureResult] {
        try await connection.call(.getPosture, NoParameters(), returning: PostureReply.self).checks
    }

    /// The service description (`org.varlink.service.GetInfo`).
    public func serviceInfo() async throws -> ServiceInfo {
        try await connection.call(.getInfo, NoParameters(), returning: ServiceInfo.self)
    }

    /// Streams events on a new connection: the current state first, then every change.
    /// The stream ends with `CordonClientError.connectionClosed` when the agent goes away.
    public func events() async throws -> AsyncThrowingStream<CordonEvent, any Error> {
        let stream = try await EventStream.open(socketPath: socketPath, token: nil)
        return stream.events
    }

    /// Closes the connection.
    public func close() async {
        await connection.close()
    }
}

/// The agent's default socket path.
public enum CordonSocket {
    /// `CORDON_SOCKET`, else `$XDG_RUNTIME_DIR/cordon/agent.sock`.
    public static var defaultPath: String {
        CordonPaths.clientSocketPath(environment: ProcessInfo.processInfo.environment, uid: UInt32(getuid()))
    }
}
