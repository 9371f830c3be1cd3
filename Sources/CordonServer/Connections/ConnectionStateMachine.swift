/// The state of one client connection, as a value: which calls wait, whether one is in flight,
/// whether the connection streams, whether reading is held back, whether it is closing, and
/// since when it has been idle.
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
        /// A reply to write now (`send` false for a oneway call).
        case reply(send: Bool)
        /// A reply that comes later; later calls wait for it.
        case deferred
        /// The connection now streams events; it serves no further calls.
        case streaming
        /// A final error to write, then close.
        case close
    }

    private(set) var identified = false
    private(set) var busy = false
    private(set) var streaming = false
    private(set) var readHeld = false
    private(set) var closing = false
    private(set) var needsFlush = false
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
        identified = true
        lastActivity = now
    }

    /// Whether a frame arriving now would be served at once (else it waits in the backlog, and
    /// the handler copies it out of the read buffer it shares, so it holds only its own bytes).
    func servesAtOnce(isWritable: Bool) -> Bool {
        identified && !busy && !streaming && !closing && isWritable && backlog.isEmpty
    }

    /// A frame of `bytes` bytes arrived from the socket at `now`.
    mutating func received(_ frame: Frame, bytes: Int, now: UInt64) -> ReceiveAction {
        guard !closing, !streaming else { return .drop }
        lastActivity = now
        guard backlog.push(Pending(frame: frame, bytes: bytes)) else { return .failTooManyPipelined }
        pendingBytes += bytes
        return .process
    }

    /// The next call to serve now, if any may be: the peer is identified, no call is in flight,
    /// the connection neither streams nor closes, and the socket has room for the reply.
    mutating func nextCall(isWritable: Bool) -> Frame? {
        guard identified, !busy, !streaming, !closing, isWritable, let next = backlog.pop() else { return nil }
        pendingBytes -= next.bytes
        return next.frame
    }

    /// The call just taken by ``nextCall(isWritable:)`` turned into `kind`.
    mutating func started(_ kind: CallKind) {
        switch kind {
        case .reply(let send): if send { needsFlush = true }
        case .deferred: busy = true
        case .streaming: streaming = true
        case .close: break
        }
    }

    /// A deferred call's reply is ready at `now`: `send` tells whether to write it (not for a
    /// oneway call, nor once the connection closes).
    mutating func deferredCompleted(oneway: Bool, now: UInt64) -> Bool {
        busy = false
        lastActivity = now
        guard !oneway, !closing else { return false }
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
        if backlogFull && !streaming && !closing {
            readHeld = true
            return false
        }
        return true
    }

    /// After serving what could be served: whether to resume a held read.
    mutating func shouldResumeReading() -> Bool {
        guard readHeld, !backlogFull else { return false }
        readHeld = false
        return true
    }

    /// Enough waits that reading pauses: half the calls the backlog holds, or the byte budget.
    private var backlogFull: Bool {
        backlog.count >= backlog.capacity / 2 || pendingBytes >= maxPendingBytes
    }

    /// The idle timer fired at `now`: close a connection idle for `timeout` nanoseconds that has
    /// not `registered` an app, check again later, or stop for good.
    func idleCheck(now: UInt64, timeout: UInt64, registered: Bool) -> IdleVerdict {
        guard !closing, !streaming, !registered else { return .stop }
        guard !busy, backlog.isEmpty else { return .checkAfter(timeout) }
        let idle = now >= lastActivity ? now - lastActivity : 0
        return idle >= timeout ? .close : .checkAfter(timeout - idle)
    }

    /// The connection fails with a final error: whether this is the first failure (then write
    /// the error, half-close, and resume a held read so the client's close is seen). Waiting
    /// calls are dropped.
    mutating func failing() -> (first: Bool, resumeReading: Bool) {
        guard !closing else { return (false, false) }
        closing = true
        backlog = BoundedQueue(capacity: backlog.capacity)
        pendingBytes = 0
        let resume = readHeld
        readHeld = false
        return (true, resume)
    }
}
