import ArgumentParser

/// How a benchmark client waits for its reply (`cordon-bench rtt --client-wait`,
/// docs/PERFORMANCE.md, "The floor and how the client waits").
///
/// A client blocked in `read(2)` on a Unix stream socket sleeps on the socket's wait queue
/// without a key, so it is woken by every event of that queue: also when the peer takes the
/// request off the socket and the kernel reports the client's socket writable again
/// (`unix_write_space`). A client waiting in `poll(2)`, `epoll_wait(2)` or an event loop built
/// on them is woken only for what it asked for (readable).
enum ClientWait: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// `poll(2)` for readable, then `read(2)`: how CordonKit's event loop (NIO's epoll),
    /// sd-varlink, sd-bus and the Secret Service peers' client wait.
    case poll
    /// Blocked in `read(2)`: a simple synchronous client.
    case read
}
