/// The state of one client connection, as a value: where it is (``State``: unadmitted, ready, a
/// call in flight, streaming, closing, each with whether reading is held back), which calls wait,
/// and since when it has been idle.
///
/// Back-pressure keeps a client's footprint bounded: while a call is in flight or the socket's
/// send buffer is full, further calls wait in a bounded backlog; once it holds half its calls or
/// its byte budget the connection stops reading from the socket, and reads again when it has
/// drained below both. What one read brings (at most four 64 KiB chunks) can still arrive
/// after the pause, so a connection holds at most the budget, one read and one partial message;
/// more calls than the backlog holds in one read fail the connection. A streaming
/// connection serves no more calls and keeps none: what it sends is dropped, and it always
/// reads, so the client's close is seen at once. An idle connection (nothing in flight or
/// waiting, not streaming) that has not registered an app is closed after the idle timeout.
/// `AgentConnectionHandler` performs what this decides (swift-nio's state-machine style: every
/// input is a `mutating` call returning what to do).
struct ConnectionStateMachine<Frame: Sendable> {
    /// What to do with a frame that arrived.
    enum ReceiveAction: Equatable {
        /// Queued: process the backlog.
        case process
        /// The connection is closing or streams: drop it.
        case drop
        /// More calls arrived in one read than the backlog holds: fail the connection.
        case failTooManyPipelined
    }

    /// What the idle timer should do when it fires.
    enum IdleVerdict: Equatable {
        /// Idle past the timeout without registering: close with `ConnectionIdle`.
        case close
        /// Check again after this many nanoseconds.
        case checkAfter(UInt64)
        /// Never idle again (streaming, registered, or closing): stop checking.
        case stop
    }

    /// What the started call turned into.
    enum CallKind {
        /// A reply written now: `flush` when NIO holds it (false for a oneway call, or a reply
        /// the socket took at once).
        case reply(flush: Bool)
        /// A reply that comes later; later calls wait for it.
        case deferred
        /// The connection now streams events; it serves no further calls.
        case streaming
        /// A final error to write, then close.
        case close
    }

    /// Where the connection is: admitted or not, a call in flight, streaming, or closing.
    enum State: Equatable {
        /// Connected; the peer is not yet identified and admitted: calls wait.
        case unadmitted(Reads)
        /// Admitted, no call in flight: the next waiting call may be served.
        case ready(Reads)
        /// A deferred call's reply is awaited: later calls wait for it.
        case awaitingReply(Reads)
        /// The connection streams events: it serves no call and keeps none of what it is sent.
        case streaming(Reads)
        /// The connection failed with a final error: nothing more is served or kept.
        case closing
    }

    /// Whether reading from the socket is held back until the backlog drains.
    enum Reads: Equatable {
        case flowing
        case held
    }

    /// Where the connection is; it starts unadmitted.
    private(set) var state: State = .unadmitted(.flowing)
    /// A reply was written and not yet flushed (an output latch, whatever the state).
    private var needsFlush = false
    /// The bytes of the calls waiting.
    private(set) var pendingBytes = 0
    /// When the last call arrived or was answered (nanoseconds on the loop's clock).
    private(set) var lastActivity: UInt64 = 0
    private let maxPendingBytes: Int
    private var backlog: BoundedQueue<Pending>

    /// A call waiting, with its size.
    private struct Pending: Sendable {
        let frame: Frame
        let bytes: Int
    }

    /// A connection whose backlog holds at most `maxPendingCalls` calls, and that stops reading
    /// at half of them or at `maxPendingBytes` bytes.
    init(maxPendingCalls: Int, maxPendingBytes: Int) {
        backlog = BoundedQueue(capacity: maxPendingCalls)
        self.maxPendingBytes = maxPendingBytes
    }

    /// The number of calls waiting.
    var pendingCalls: Int { backlog.count }

    /// The peer is identified and admitted at `now`: calls may be served.
    mutating func admitted(now: UInt64) {
        if case .unadmitted(let reads) = state { state = .ready(reads) }
        lastActivity = now
    }

    /// A deferred call's reply is awaited.
    var busy: Bool {
        if case .awaitingReply = state { return true }
        return false
    }

    /// Reading is held back until the backlog drains.
    var readHeld: Bool { reads == .held }

    /// How reading stands (`flowing` once the connection closes).
    private var reads: Reads {
        switch state {
        case .unadmitted(let reads), .ready(let reads), .awaitingReply(let reads), .streaming(let reads): reads
        case .closing: .flowing
        }
    }

    /// The state with reading set to `reads` (a closing connection has none to set).
    private mutating func setReads(_ reads: Reads) {
        switch state {
        case .unadmitted: state = .unadmitted(reads)
        case .ready: state = .ready(reads)
        case .awaitingReply: state = .awaitingReply(reads)
        case .streaming: state = .streaming(reads)
        case .closing: break
        }
    }

    /// Whether a frame arriving now would be served at once (else it waits in the backlog, and
    /// the handler copies it out of the read buffer it shares, so it holds only its own bytes).
    func servesAtOnce(isWritable: Bool) -> Bool {
        guard case .ready = state else { return false }
        return isWritable && backlog.isEmpty
    }

    /// A frame of `bytes` bytes arrived from the socket at `now`.
    mutating func received(_ frame: Frame, bytes: Int, now: UInt64) -> ReceiveAction {
        switch state {
        case .closing, .streaming: return .drop
        case .unadmitted, .ready, .awaitingReply: break
        }
        lastActivity = now
        guard backlog.push(Pending(frame: frame, bytes: bytes)) else { return .failTooManyPipelined }
        pendingBytes += bytes
        return .process
    }

    /// The next call to serve now, if any may be: the peer is identified, no call is in flight,
    /// the connection neither streams nor closes, and the socket has room for the reply.
    mutating func nextCall(isWritable: Bool) -> Frame? {
        guard case .ready = state, isWritable, let next = backlog.pop() else { return nil }
        pendingBytes -= next.bytes
        return next.frame
    }

    /// The call just taken by ``nextCall(isWritable:)`` turned into `kind`.
    mutating func started(_ kind: CallKind) {
        switch kind {
        case .reply(let flush): if flush { needsFlush = true }
        case .deferred: if case .ready(let reads) = state { state = .awaitingReply(reads) }
        case .streaming:
            switch state {
            case .unadmitted(let reads), .ready(let reads), .awaitingReply(let reads): state = .streaming(reads)
            case .streaming, .closing: break
            }
        case .close: break
        }
    }

    /// A deferred call's reply is ready at `now`: `send` tells whether to write it (not for a
    /// oneway call, nor once the connection closes).
    mutating func deferredCompleted(oneway: Bool, now: UInt64) -> Bool {
        lastActivity = now
        switch state {
        case .closing: return false
        case .awaitingReply(let reads): state = .ready(reads)
        case .unadmitted, .ready, .streaming: break
        }
        guard !oneway else { return false }
        needsFlush = true
        return true
    }

    /// Whether to flush what was written; clears the mark.
    mutating func takeFlush() -> Bool {
        defer { needsFlush = false }
        return needsFlush
    }

    /// NIO asks to read: whether to pass the read on (false holds it until the backlog drains).
    mutating func readRequested() -> Bool {
        switch state {
        case .unadmitted, .ready, .awaitingReply:
            guard backlogFull else { return true }
            setReads(.held)
            return false
        case .streaming, .closing: return true
        }
    }

    /// After serving what could be served: whether to resume a held read.
    mutating func shouldResumeReading() -> Bool {
        guard reads == .held, !backlogFull else { return false }
        setReads(.flowing)
        return true
    }

    /// Enough waits that reading pauses: half the calls the backlog holds, or the byte budget.
    private var backlogFull: Bool {
        backlog.count >= backlog.capacity / 2 || pendingBytes >= maxPendingBytes
    }

    /// The idle timer fired at `now`: close a connection idle for `timeout` nanoseconds that has
    /// not `registered` an app, check again later, or stop for good.
    func idleCheck(now: UInt64, timeout: UInt64, registered: Bool) -> IdleVerdict {
        switch state {
        case .closing, .streaming: return .stop
        case .awaitingReply: return registered ? .stop : .checkAfter(timeout)
        case .unadmitted, .ready: break
        }
        guard !registered else { return .stop }
        guard backlog.isEmpty else { return .checkAfter(timeout) }
        let idle = now >= lastActivity ? now - lastActivity : 0
        return idle >= timeout ? .close : .checkAfter(timeout - idle)
    }

    /// The connection fails with a final error: whether this is the first failure (then write
    /// the error, half-close, and resume a held read so the client's close is seen). Waiting
    /// calls are dropped.
    mutating func failing() -> (first: Bool, resumeReading: Bool) {
        if case .closing = state { return (false, false) }
        let resume = reads == .held
        state = .closing
        backlog = BoundedQueue(capacity: backlog.capacity)
        pendingBytes = 0
        return (true, resume)
    }
}
