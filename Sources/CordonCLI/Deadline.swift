import CordonLocking

/// Runs async work with a time limit, for calls that may never answer (a hung agent).
enum Deadline {
    /// The error when the limit passes first.
    struct Expired: Error {}

    /// The result of `operation`, or `Expired` after `seconds`. The operation is abandoned, not
    /// cancelled, when the limit passes (CordonKit's calls do not support cancellation).
    static func run<T: Sendable>(
        seconds: Double, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            Task {
                do {
                    once.resume(with: .success(try await operation()))
                } catch {
                    once.resume(with: .failure(error))
                }
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                once.resume(with: .failure(Expired()))
            }
        }
    }
}

/// A continuation that only the first of several racers resumes.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let pending: Locked<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        pending = Locked(continuation)
    }

    func resume(with result: Result<T, any Error>) {
        let continuation = pending.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume(with: result)
    }
}
