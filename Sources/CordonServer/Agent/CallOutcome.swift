import NIOCore

/// What the connection does with the result of one call.
enum CallOutcome {
    /// Write this frame (unless the call was oneway).
    case reply(ByteBuffer)
    /// Wait for the frame; later calls on the connection wait too, so replies stay in order.
    case deferred(EventLoopFuture<ByteBuffer>)
    /// The connection now streams events; no further calls are read from it.
    case streaming
    /// Write this frame, then close the connection.
    case close(ByteBuffer)
}
