import NIOConcurrencyHelpers

/// A value only reached under a lock: the project's `Mutex`, over a pthread mutex (`NIOLock`).
///
/// Not the standard library's `Synchronization.Mutex`: on Linux its contended path takes the lock
/// in the kernel (a priority-inheritance futex) inside the uninstrumented standard library, so
/// ThreadSanitizer sees no acquire and reports every contended critical section as a race
/// (docs/ARCHITECTURE.md, "Concurrency"). ThreadSanitizer intercepts pthread mutexes, so a race it
/// reports through `Locked` is a real one.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NIOLock()
    private var value: Value

    /// A lock holding `value`.
    public init(_ value: sending Value) {
        self.value = value
    }

    /// Runs `body` with the value, the lock held; returns what `body` returns.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
