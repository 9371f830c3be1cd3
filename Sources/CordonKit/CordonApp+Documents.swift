import CordonProtocol
import Foundation
import Glibc

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
    /// The destination directory is opened first and the agent decides on its real path (read
    /// back from the open descriptor) plus the file name; the file is then written *relative to
    /// that descriptor* (`openat`, `renameat`), so a symlink or directory swapped in at the path
    /// after the decision is never followed, and a directory moved away meanwhile is refused
    /// (docs/THREAT-MODEL.md, "Documents").
    public func save(_ data: Data, to path: String, contentType: String? = nil) async throws {
        try await save(data, to: path, contentType: contentType, afterDecision: nil)
    }

    /// `save`, with `afterDecision` run between the decision and the write (tests race there).
    func save(
        _ data: Data, to path: String, contentType: String?, afterDecision: (@Sendable () async throws -> Void)?
    ) async throws {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        let directory = url.deletingLastPathComponent().path
        guard !name.isEmpty, name != ".", name != "..", name != "/" else {
            throw CordonError.denied(
                action: PolicyAction.documentSave.rawValue, reason: "\(path) does not name a file", rules: [])
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            // Decided as given: the agent refuses a directory that does not resolve, naming it.
            let decision = try await check(.documentSave, target: url.path, contentType: contentType)
            throw CordonError.denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules)
        }
        defer { Glibc.close(descriptor) }
        let decided = Self.path(of: descriptor) ?? directory
        let target = (decided == "/" ? "" : decided) + "/" + name
        let decision = try await check(.documentSave, target: target, contentType: contentType)
        guard decision.allowed else {
            throw CordonError.denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules)
        }
        if let afterDecision { try await afterDecision() }
        guard Self.path(of: descriptor) == decided else {
            throw CordonError.denied(
                action: PolicyAction.documentSave.rawValue,
                reason: "\(decided) was moved after the decision; nothing was written", rules: [])
        }
        try Self.write(data, named: name, in: descriptor, describing: target)
    }

    /// Writes `data` as `name` in the directory `descriptor`: a new `0600` file (never through a
    /// link), synced, then renamed over `name` — a reader sees the old file or the new, never half.
    static func write(_ data: Data, named name: String, in descriptor: Int32, describing target: String) throws {
        let temporary = ".\(UUID().uuidString).cordon-save"
        let file = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(file, base + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure == 0 && fsync(file) != 0 { failure = errno }
        Glibc.close(file)
        if failure == 0 && renameat(descriptor, temporary, descriptor, name) != 0 { failure = errno }
        guard failure == 0 else {
            unlinkat(descriptor, temporary, 0)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO, userInfo: [NSFilePathErrorKey: target])
        }
    }

    /// The real path of the directory open as `descriptor`, or nil.
    static func path(of descriptor: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
    }
}
