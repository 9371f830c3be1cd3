#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The process's `RLIMIT_NOFILE`, raised at start so the connection limit is reachable.
///
/// systemd starts services with a soft limit of 1,024 (for programs that still use
/// `select()`) and a much higher hard limit; the agent uses epoll, and each connection holds a
/// socket and a pidfd, so it raises its soft limit towards what its connection limit needs.
public struct DescriptorLimit: Sendable, Equatable {
    public var soft: UInt64
    public var hard: UInt64

    /// The limit in force now.
    public static func current() throws -> DescriptorLimit {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw SystemError(operation: "getrlimit(RLIMIT_NOFILE)", errno: errno)
        }
        return DescriptorLimit(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
    }

    /// Raises the soft limit to `wanted`, or to the hard limit when that is lower; never lowers
    /// it. Returns the limit now in force.
    @discardableResult
    public static func raise(to wanted: UInt64) throws -> DescriptorLimit {
        let now = try current()
        let target = min(wanted, now.hard)
        guard target > now.soft else { return now }
        var limit = rlimit(rlim_cur: rlim_t(target), rlim_max: rlim_t(now.hard))
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw SystemError(operation: "setrlimit(RLIMIT_NOFILE)", errno: errno)
        }
        return DescriptorLimit(soft: target, hard: now.hard)
    }

    /// Descriptors the agent needs for `connections` clients: a socket and a pidfd each, plus
    /// room for its database, watchers, buses and listening socket.
    public static func needed(forConnections connections: Int) -> UInt64 {
        UInt64(max(connections, 0)) * 2 + 256
    }
}
