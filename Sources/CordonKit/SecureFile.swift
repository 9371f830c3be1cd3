import CordonAge
import CordonProtocol
import CordonSecrets
import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files only the app can read, in the age format (age-encryption.org/v1): encrypted to the app's
/// X25519 identity, derived from its key (`AgeX25519Identity.derived(fromAppKey:)`), streamed in
/// 64 KiB chunks with constant memory (docs/ARCHITECTURE.md, "Storage").
///
/// It obeys the container as `SecureStore` does: each operation needs the key (`ContainerLocked`
/// otherwise), and a revocation while a file streams stops it before the next chunk — a write
/// is then removed, never left half-written; a read has produced only chunks that authenticated.
/// `cordon storage export-identity --app ID` gives the same identity to the `age` CLI, and files
/// `age -r` wrote to the app's recipient are read here.
///
/// ```swift
/// let files = SecureFile(app: app)
/// try await files.write(Data(report.utf8), to: "/home/ada/.local/share/notes/report.age")
/// let report = try await files.read("/home/ada/.local/share/notes/report.age")
/// ```
public final class SecureFile: Sendable {
    /// The app whose files these are.
    public let app: CordonApp

    public init(app: CordonApp) {
        self.app = app
    }

    /// The app's recipient (`age1…`): encrypt to it with `age -r` and `read` opens the file.
    public func recipient() async throws -> String {
        try await withIdentity { identity, _ in identity.recipient.encoded }
    }

    /// Writes `data` encrypted to `path`, atomically (a new `0600` file renamed over `path`).
    public func write(_ data: Data, to path: String) async throws {
        var offset = 0
        try await write(to: path) { buffer in
            let count = min(buffer.count, data.count - offset)
            buffer.withUnsafeMutableBytes { target in
                data.copyBytes(to: target.bindMemory(to: UInt8.self), from: offset..<offset + count)
            }
            offset += count
            return count
        }
    }

    /// Encrypts everything readable from `input` to `path`, atomically: the file appears whole or
    /// not at all (a revocation or an error midway removes what was written).
    public func write(from input: Int32, to path: String) async throws {
        try await write(to: path) { buffer in try Self.readSome(input, into: &buffer) }
    }

    private func write(to path: String, from source: (inout [UInt8]) throws -> Int) async throws {
        try await withIdentity { identity, isCurrent throws in
            let temporary = path + ".\(UUID().uuidString.prefix(8)).cordon-tmp"
            let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard output >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            do {
                try Self.encrypt(from: source, to: output, recipient: identity.recipient, isCurrent: isCurrent)
                guard fsync(output) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                close(output)
                guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                // The rename itself survives a crash only once its directory is on the disk.
                try Self.syncDirectory(of: path)
            } catch {
                close(output)
                unlink(temporary)
                throw isCurrent() ? error : CordonError.containerLocked(appId: app.appId, state: "revoked")
            }
        }
    }

    /// The decrypted contents of the age file at `path`.
    public func read(_ path: String) async throws -> Data {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(input) }
        return try await withIdentity { identity, isCurrent throws in
            var plaintext = Data()
            try Self.decrypt(from: input, identity: identity, isCurrent: isCurrent) { plaintext.append(contentsOf: $0) }
            return plaintext
        }
    }

    /// Decrypts the age file at `path` into `output`, chunk by chunk; on an error, `output` has
    /// received the chunks that authenticated before it and nothing more.
    public func read(_ path: String, to output: Int32) async throws {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(input) }
        try await withIdentity { identity, isCurrent throws in
            try Self.decrypt(from: input, identity: identity, isCurrent: isCurrent) { bytes in
                try Self.writeAll(output, bytes)
            }
        }
    }

    // MARK: - Key

    /// Runs `body` with the app's identity and a check that the key is still the one it came from.
    private func withIdentity<R: Sendable>(
        _ body: (AgeX25519Identity, _ isCurrent: @escaping @Sendable () -> Bool) throws -> R
    ) async throws -> R {
        let keys = app.keyState
        let epoch = keys.epoch
        let key: SecureBytes
        do {
            key = try await app.secureKey()
        } catch CordonError.keyUnavailable(let state) {
            throw CordonError.containerLocked(appId: app.appId, state: state)
        }
        let identity = try keys.withKey(key, fetchedAt: epoch, appId: app.appId) { current in
            current.withUnsafeBytes { AgeX25519Identity.derived(fromAppKey: SymmetricKey(data: $0)) }
        }
        do {
            // The stream blocks on file I/O: never on the cooperative pool.
            return try await Self.offThePool { try body(identity) { keys.epoch == epoch } }
        } catch {
            // Stopped by a revocation (or failing because of one): the container's error.
            if error is Revoked || keys.epoch != epoch {
                throw CordonError.containerLocked(appId: app.appId, state: "revoked")
            }
            throw error
        }
    }

    /// Runs blocking `work` on a Dispatch thread and waits for it without holding a thread of the
    /// cooperative pool.
    ///
    /// The Dispatch thread lets go of `work` before it resumes the caller: `withoutActuallyEscaping`
    /// traps when the closure is still referenced as it returns, and the Dispatch block that ran
    /// it may be released only after the caller has already gone on.
    static func offThePool<R: Sendable>(_ work: () throws -> R) async throws -> R {
        try await withoutActuallyEscaping(work) { work in
            let transfer = BlockingWork(run: work)
            return try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: transfer.runOnce()) }
            }
        }
    }
}

/// Blocking work handed to one Dispatch thread while its caller waits for it (never shared): run
/// once, then released before the caller is resumed.
private final class BlockingWork<R>: @unchecked Sendable {
    private var run: (() throws -> R)?

    init(run: @escaping () throws -> R) { self.run = run }

    /// Runs the work and drops the reference to it.
    func runOnce() -> Result<R, any Error> {
        guard let work = run else { preconditionFailure("blocking work run twice") }
        run = nil
        return Result { try work() }
    }
}
