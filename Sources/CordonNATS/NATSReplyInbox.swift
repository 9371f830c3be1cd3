import CNATS
import CordonLocking
import Dispatch

/// The connection's requests and their replies: one wildcard subscription on
/// `<inbox prefix>.<random>.*`, made at the first request, delivered like every other subscription
/// (on the library's shared delivery pool when the connection uses it), each reply matched to its
/// waiting caller by the subject's last token.
///
/// nats.c's own request path (`natsConnection_Request`, and the JetStream calls built on it) makes
/// its reply subscription outside the shared pool, with a thread of its own per connection: 10,000
/// simulated machines were 10,000 threads (docs/PERFORMANCE.md, "Fleet push"). This keeps one
/// process's threads independent of its number of connections.
final class NATSReplyInbox: Sendable {
    /// A reply: its data and the headers a request reads (the status line's code and text, and
    /// what a direct get says of the message it returns).
    struct Reply: Sendable {
        var data: [UInt8]
        /// `Status` (`404`, `503`…), nil for a reply without a status line.
        var status: String?
        var statusDescription: String?
        /// `Nats-Subject`: the subject of the message a direct get returns.
        var messageSubject: String?
    }

    /// One caller waiting for its reply.
    final class Waiter: Sendable {
        let ready = DispatchSemaphore(value: 0)
        let reply = Locked<Result<Reply, NATSError>?>(nil)

        func resolve(_ result: Result<Reply, NATSError>) {
            let first = reply.withLock { value -> Bool in
                guard value == nil else { return false }
                value = result
                return true
            }
            if first { ready.signal() }
        }
    }

    /// `<inbox prefix>.<random>.`: each request's reply subject is this and its token.
    let prefix: String
    private let state = Locked(State())

    private struct State {
        var waiting: [String: Waiter] = [:]
        var next: UInt64 = 0
        var closed = false
    }

    init(inboxPrefix: String?) {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<2).map { _ in String(generator.next() as UInt64, radix: 36) }.joined()
        prefix = "\(inboxPrefix ?? "_INBOX").\(random)."
    }

    /// The subject the subscription listens on.
    var wildcard: String { prefix + "*" }

    /// A new reply subject and the waiter its reply resolves; nil once the connection is closed.
    func expect() -> (subject: String, waiter: Waiter)? {
        state.withLock { state -> (String, Waiter)? in
            guard !state.closed else { return nil }
            state.next += 1
            let token = String(state.next, radix: 36)
            let waiter = Waiter()
            state.waiting[token] = waiter
            return (prefix + token, waiter)
        }
    }

    /// Forgets a request that timed out or failed to go out (a late reply is dropped).
    func forget(_ subject: String) {
        let token = subject.dropFirst(prefix.count)
        _ = state.withLock { $0.waiting.removeValue(forKey: String(token)) }
    }

    /// A reply arrived on `subject`: its waiter, if it still waits, has it.
    func deliver(subject: String, _ reply: Reply) {
        guard subject.hasPrefix(prefix) else { return }
        let token = String(subject.dropFirst(prefix.count))
        state.withLock { $0.waiting.removeValue(forKey: token) }?.resolve(.success(reply))
    }

    /// The connection is closed: every waiting caller gets `error`, and no request starts again.
    func close(_ error: NATSError) {
        let waiting = state.withLock { state -> [Waiter] in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.resolve(.failure(error)) }
    }
}

/// The inbox subscription's callback: the reply's data and headers are copied, the library's
/// message freed, and the waiting caller woken.
func deliverReply(
    _ connection: OpaquePointer?, _ subscription: OpaquePointer?, _ message: OpaquePointer?,
    _ closure: UnsafeMutableRawPointer?
) {
    guard let message else { return }
    defer { natsMsg_Destroy(message) }
    guard let closure, let subject = natsMsg_GetSubject(message) else { return }
    let inbox = Unmanaged<NATSReplyInbox>.fromOpaque(closure).takeUnretainedValue()
    func header(_ key: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(message, key, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }
    let copied = NATSConnection.copy(message)
    inbox.deliver(
        subject: String(cString: subject),
        NATSReplyInbox.Reply(
            data: copied.data, status: header("Status"), statusDescription: header("Description"),
            messageSubject: header("Nats-Subject")))
}
