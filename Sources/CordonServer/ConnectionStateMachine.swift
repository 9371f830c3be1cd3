/// The state of one client connection, as a value: which calls wait, whether one is in flight,
/// whether the connection streams, whether reading is held back, and whether it is closing.
///
/// Back-pressure keeps a client's footprint bounded: while a call is in flight or the socket's
/// send buffer is full, further calls wait in a bounded backlog; once the backlog is half full
/// the connection stops reading from the socket, and reads again when it has drained below
/// half. A streaming or closing connection always reads, so the client's close is seen at once.
/// `AgentConnectionHandler` performs what this decides (swift-nio's state-machine style: every
/// input is a `mutating` call returning what to do).
struct ConnectionStateMachine<Frame: Sendable> {
    /// What to do with a frame that arrived.
    enum ReceiveAction: Equatable {
        /// Queued: process the backlog.
        case process
        /// The connection is closing: drop it.
        case drop
        /// More calls arrived in one read than the backlog holds: fail the connection.
        case failTooManyPipelined
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
    private var backlog: BoundedQueue<Frame>

    /// A connection whose backlog holds at most `maxPendingCalls` calls.
    init(maxPendingCalls: Int) {
        backlog = BoundedQueue(capacity: maxPendingCalls)
    }

    /// The number of calls waiting.
    var pendingCalls: Int { backlog.count }

    /// The peer is identified and admitted: calls may be served.
    mutating func admitted() { identified = true }

    /// A frame arrived from the socket.
    mutating func received(_ frame: Frame) -> ReceiveAction {
        guard !closing else { return .drop }
        return backlog.push(frame) ? .process : .failTooManyPipelined
    }

    /// The next call to serve now, if any may be: the peer is identified, no call is in flight,
    /// the connection neither streams nor closes, and the socket has room for the reply.
    mutating func nextCall(isWritable: Bool) -> Frame? {
        guard identified, !busy, !streaming, !closing, isWritable else { return nil }
        return backlog.pop()
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

    /// A deferred call's reply is ready: `send` tells whether to write it (not for a oneway
    /// call, nor once the connection closes).
    mutating func deferredCompleted(oneway: Bool) -> Bool {
        busy = false
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
        if backlog.count >= backlog.capacity / 2 && !streaming && !closing {
            readHeld = true
            return false
        }
        return true
    }

    /// After serving what could be served: whether to resume a held read.
    mutating func shouldResumeReading() -> Bool {
        guard readHeld, backlog.count < backlog.capacity / 2 else { return false }
        readHeld = false
        return true
    }

    /// The connection fails with a final error: whether this is the first failure (then write
    /// the error, half-close, and resume a held read so the client's close is seen). Waiting
    /// calls are dropped.
    mutating func failing() -> (first: Bool, resumeReading: Bool) {
        guard !closing else { return (false, false) }
        closing = true
        backlog = BoundedQueue(capacity: backlog.capacity)
        let resume = readHeld
        readHeld = false
        return (true, resume)
    }
}
