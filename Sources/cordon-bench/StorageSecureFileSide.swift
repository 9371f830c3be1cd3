import CordonKit
import Foundation

/// `SecureFile`, the SDK's app files, as `cordon-bench storage --file` measures it: an app
/// registered with a `BenchAgent`, its identity derived from the key the agent gives it, the key
/// checked before every chunk, the written file fsynced and renamed into place — everything an
/// app pays beyond `AgeFile` alone.
final class StorageSecureFileSide {
    let agent: BenchAgent
    let files: SecureFile
    let app: CordonApp

    init(directory: String) throws {
        agent = try BenchAgent(directory: directory)
        do {
            let socket = agent.socket
            app = try BlockingAsync.run { try await CordonApp.connect(appId: "com.example.bench", socketPath: socket) }
        } catch {
            agent.stop()
            throw error
        }
        files = SecureFile(app: app)
    }

    /// Encrypts `plain` to `path`.
    func encrypt(_ plain: String, to path: String) throws {
        let input = open(plain, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw BenchError.daemon("cannot open \(plain): errno \(errno)") }
        defer { close(input) }
        let files = files
        try BlockingAsync.run { try await files.write(from: input, to: path) }
    }

    /// Decrypts `path` to /dev/null.
    func decrypt(_ path: String) throws {
        let output = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard output >= 0 else { throw BenchError.daemon("cannot open /dev/null: errno \(errno)") }
        defer { close(output) }
        let files = files
        try BlockingAsync.run { try await files.read(path, to: output) }
    }

    func stop() {
        let app = app
        try? BlockingAsync.run { await app.close() }
        agent.stop()
    }
}

/// Runs async work from the benchmark's synchronous commands and waits for it.
enum BlockingAsync {
    static func run<R: Sendable>(_ work: @escaping @Sendable () async throws -> R) throws -> R {
        let box = ResultBox<R>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        guard let result = box.result else { throw BenchError.daemon("async work ended without a result") }
        return try result.get()
    }

    /// The result handed from the task to the waiting thread (the semaphore orders the accesses).
    private final class ResultBox<R>: @unchecked Sendable {
        var result: Result<R, any Error>?
    }
}
