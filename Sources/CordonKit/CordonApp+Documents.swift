import CordonProtocol
import Foundation

extension CordonApp {
    /// Implicit unlock (as VaultMobileSDK's implicit login): call it when an action needs the
    /// key. Within the re-authentication grace the container unlocks at once; otherwise the agent
    /// asks the user through pinentry and this returns once the container is unlocked (by that
    /// prompt or any other way), or throws `CordonError.unlockCancelled`, `.unlockTimedOut` or
    /// `.unlockUnavailable` (no pinentry, display or terminal: ask the user to run `cordon unlock`).
    ///
    /// Runs on a connection of its own, so the app's other calls are not held up meanwhile.
    @discardableResult
    public func requestUnlock(timeoutSeconds: Int = 120) async throws -> Bool {
        let connection = try await VarlinkClientConnection.connect(path: socketPath)
        defer { Task { await connection.close() } }
        let reply = try await connection.call(
            .requestUnlock, RequestUnlockParameters(appId: appId, timeoutSeconds: timeoutSeconds, token: token),
            returning: RequestUnlockReply.self)
        return reply.prompted
    }

    /// Hands the file at `path` to the running app `appId`: the policy must allow this app's
    /// `document.send` and the target's `document.receive` (with this app as the source). The
    /// target receives an `openDocument` event. Throws `CordonError.denied` with the deciding rules,
    /// or `.targetNotRunning` when the target is not registered and subscribed.
    public func share(file path: String, with appId: String, contentType: String? = nil) async throws {
        // Sent as given (made absolute): the agent resolves it, as the kernel would.
        let absolute = URL(fileURLWithPath: path).path
        _ = try await control.call(
            .shareDocument, ShareDocumentParameters(path: absolute, contentType: contentType, target: appId),
            returning: NoParameters.self)
    }

    /// Saves `data` at `path` if the policy's `document.save` allows it (`saveCopies`,
    /// `saveLocations`, `blockedTypes`), atomically and readable by the user only; throws
    /// `CordonError.denied` with the deciding rules otherwise, and writes nothing.
    ///
    /// The agent decides on the canonical destination (the directory's real path, symlinks
    /// resolved, plus the file name), and that is where the file is written.
    public func save(_ data: Data, to path: String, contentType: String? = nil) async throws {
        let absolute = Self.canonicalDestination(URL(fileURLWithPath: path).path)
        let decision = try await check(.documentSave, target: absolute, contentType: contentType)
        guard decision.allowed else {
            throw CordonError.denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules)
        }
        let directory = URL(fileURLWithPath: absolute).deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).cordon-save")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: absolute]) }
        // rename(2) replaces the file atomically: a reader sees the old or the new, never half.
        guard rename(temporary.path, absolute) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(code)
        }
    }

    /// `path` with its directory resolved by `realpath` (unchanged when that fails: the agent
    /// then refuses it, naming it).
    static func canonicalDestination(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + url.lastPathComponent
    }
}
