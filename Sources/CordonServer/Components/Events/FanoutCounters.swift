/// How the event bus's frames went out: past NIO (`DirectSocket`) or through it, and why
/// (docs/ARCHITECTURE.md, "An event, from the lifecycle machine to every subscriber").
struct FanoutCounters: Equatable {
    /// Frames written whole with one `send` on the subscriber's descriptor.
    var direct = 0
    /// Frames a direct `send` wrote only in part; NIO wrote the rest.
    var partial = 0
    /// Frames a direct `send` found no room for; NIO took them whole.
    var wouldBlock = 0
    /// Frames a direct `send` failed on (the peer gone); NIO took them, met the error and closed.
    var failed = 0
    /// Frames handed to NIO without trying: no verified descriptor, or NIO still held earlier
    /// frames for the subscriber.
    var throughNIO = 0

    /// Counts one frame that went out by `outcome`.
    mutating func record(_ outcome: DirectSocket.Outcome) {
        switch outcome {
        case .wrote: direct += 1
        case .partial: partial += 1
        case .wouldBlock: wouldBlock += 1
        case .failed: failed += 1
        }
    }
}
