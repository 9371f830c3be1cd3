import CCordonLinux
import CordonProtocol
import CordonSecrets
import Crypto
import Foundation

/// A wrapped app: registered with the agent, hearing its events, holding its own key.
///
/// Manual integration, as the mobile SDKs document it:
/// ```swift
/// let app = try await CordonApp.connect(appId: "com.example.notes")
/// for await event in app.events {
///     switch event.kind {
///     case .encryptionKeyAvailable: key = try await app.key()
///     case .encryptionKeyUnavailable:
///         closeFiles(); key = nil
///         try await app.acknowledge(event, status: .halted)
///     default: break
///     }
/// }
/// ```
/// A lost connection to the agent arrives as `encryptionKeyUnavailable` with reason
/// `agentUnavailable`, after which the sequence ends.
public final class CordonApp: Sendable {
    public let appId: String
    /// The agent's socket.
    public let socketPath: String
    /// Whether the agent manages this app (only managed apps get a key).
    public let managed: Bool
    /// Typed events: a `state` snapshot first, then every change.
    public let events: AsyncStream<CordonEvent>
    let control: VarlinkClientConnection
    /// Names this registration on the app's other connections (the event stream, `requestUnlock`).
    let token: String
    private let subscription: EventStream
    /// The app key for `SecureStore`, revoked by the events task before the app hears why.
    let keyState: AppKeyState
    /// The app's key as `secureChannel()` follows it: fed every event before the app hears it.
    let channelGate: ChannelGate

    private init(
        appId: String, socketPath: String, managed: Bool, control: VarlinkClientConnection, token: String,
        subscription: EventStream, events: AsyncStream<CordonEvent>, keyState: AppKeyState,
        channelGate: ChannelGate
    ) {
        self.keyState = keyState
        self.channelGate = channelGate
        self.appId = appId
        self.token = token
        self.socketPath = socketPath
        self.managed = managed
        self.control = control
        self.subscription = subscription
        self.events = events
    }

    /// Registers `appId` with the agent and subscribes to its events. With `process`, registers
    /// on behalf of that child process of the caller (as `cordon run` does): the agent checks
    /// that process against the policy and enforces on it.
    public static func connect(appId: String, socketPath: String? = nil, process: Int32? = nil) async throws
        -> CordonApp
    {
        let path = socketPath ?? CordonSocket.defaultPath
        // The agent reads what the app runs while the app is still dumpable (its own user cannot
        // read a non-dumpable process's executable or memory map): a process that hardened itself
        // in an earlier registration (the agent restarted) is dumpable again for this one, and
        // hardens again below, before any key can reach it (docs/THREAT-MODEL.md, "App identity").
        let wasHardened = process == nil && cordon_get_dumpable() == 0
        if wasHardened { _ = cordon_set_dumpable() }
        let control: VarlinkClientConnection
        do {
            control = try await VarlinkClientConnection.connect(path: path)
        } catch {
            if wasHardened { _ = cordon_set_nondumpable() }
            throw error
        }
        let registration: RegisterReply
        let subscription: EventStream
        do {
            registration = try await control.call(
                .register, RegisterParameters(appId: appId, pid: process.map(Int.init)), returning: RegisterReply.self)
            subscription = try await EventStream.open(socketPath: path, token: registration.token)
        } catch {
            // A half-made app must not keep its registration (one live registration per app id).
            // It goes back to what it was: hardening a process whose own first registration
            // failed would vouch for whatever registration another holder of a socket it
            // inherited made for it.
            await control.close()
            if wasHardened { _ = cordon_set_nondumpable() }
            throw error
        }
        // Registered and checked: from now on no process of this user may attach to the app (a
        // debugger, a memory reader) or get a core dump of its key (docs/THREAT-MODEL.md).
        if process == nil { _ = cordon_set_nondumpable() }
        let source = subscription.events
        let keyState = AppKeyState()
        let channelGate = ChannelGate(appId: appId)
        let events = AsyncStream<CordonEvent> { continuation in
            let task = Task {
                var lastSeq = 0
                do {
                    for try await event in source {
                        lastSeq = max(lastSeq, event.seq)
                        // The SDK's own storage closes before the app hears the event.
                        if AppKeyState.revokes(event, appId: appId) { keyState.revoke() }
                        // The pinned channel's connections are cut before the app hears it too.
                        channelGate.follow(event)
                        // A channel in use follows a new policy before the app hears of it:
                        // connections to servers it refuses are cut, new ones use its pins.
                        if case .policyDidChange = event.payload, channelGate.policy != nil,
                            let reply = try? await control.call(
                                .getNetworkPolicy, GetNetworkPolicyParameters(), returning: NetworkPolicyReply.self)
                        {
                            // Each connection cut goes to the agent's audit log, with its reason.
                            let cuts = await channelGate.apply(reply.policy)
                            if !cuts.isEmpty { try? await Self.reportChannelCuts(cuts, over: control) }
                        }
                        continuation.yield(event)
                    }
                } catch {}
                // However the stream ended, the key must be treated as gone.
                keyState.revoke()
                channelGate.keyBecameUnavailable(reason: EventReason.agentUnavailable.rawValue)
                continuation.yield(.agentUnavailable(lastSeq: lastSeq))
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        let app = CordonApp(
            appId: appId, socketPath: path, managed: registration.managed, control: control,
            token: registration.token, subscription: subscription, events: events, keyState: keyState,
            channelGate: channelGate)
        // Losing the control connection means losing the registration: end the events too.
        control.closeFuture.whenComplete { _ in Task { await subscription.connection.close() } }
        return app
    }

    /// Tells the agent the app handled `event` (`halted`: I/O stopped and the key dropped).
    public func acknowledge(_ event: CordonEvent, status: AcknowledgeStatus = .halted) async throws {
        _ = try await control.call(
            .acknowledge, AcknowledgeParameters(seq: event.seq, status: status), returning: NoParameters.self)
    }

    /// The app's own key while the key is available; throws `CordonError.keyUnavailable` otherwise.
    public func key() async throws -> SymmetricKey {
        let key = try await secureKey()
        return key.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// The app's own key in locked memory (for `SecureStore`).
    func secureKey() async throws -> SecureBytes {
        let reply = try await control.call(.getKey, NoParameters(), returning: GetKeyReply.self)
        guard var bytes = Data(base64Encoded: reply.key), bytes.count == 32 else {
            throw CordonClientError.protocolViolation("the key is not 32 base64-encoded bytes")
        }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        return SecureBytes(copying: bytes)
    }

    /// Unlocks without the passcode when the re-authentication grace allows it (the app comes back
    /// to the foreground soon after a lock); throws `CordonError.passcodeRequired` otherwise, and
    /// never prompts (``requestUnlock(timeoutSeconds:)`` does). Only a verified managed app may.
    public func unlockWithinGrace() async throws {
        _ = try await control.call(.unlock, UnlockParameters(passcode: nil), returning: NoParameters.self)
    }

    /// Resets the agent's idle timer (call on user activity).
    public func reportActivity() async throws {
        _ = try await control.call(.reportActivity, NoParameters(), returning: NoParameters.self)
    }

    /// Unregisters and closes both connections.
    public func close() async {
        keyState.revoke()
        channelGate.keyBecameUnavailable(reason: "closed")
        await subscription.connection.close()
        await control.close()
    }
}
