#if canImport(Glibc)
    import Glibc
#endif

/// Failures of the fan-out and memory benchmarks (their C helpers return -errno).
enum FanoutError: Error, CustomStringConvertible {
    case call(String, Int64)
    case agent(String)
    case baseline(String)

    /// Throws `.call(name, -result)` when a C helper returned a negative errno; else returns `result`.
    @discardableResult
    static func check<Result: SignedInteger>(_ name: String, _ result: Result) throws(FanoutError) -> Result {
        guard result >= 0 else { throw .call(name, -Int64(result)) }
        return result
    }

    var description: String {
        switch self {
        case .call(let name, let code): return "\(name) failed: \(String(cString: strerror(Int32(code))))"
        case .agent(let detail): return "cordond: \(detail)"
        case .baseline(let detail): return "dbus-daemon: \(detail)"
        }
    }
}
