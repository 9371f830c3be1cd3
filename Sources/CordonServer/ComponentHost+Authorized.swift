import CordonLifecycle
import CordonProtocol
import NIOCore

extension ComponentHost {
    /// Runs `body` once the passcode is checked, and counted like `Unlock`'s, by the lifecycle
    /// machine (`authorizeRequested`): what an administrator's call naming an app (storage, tokens)
    /// needs. A refusal (a wrong passcode, a lockout) is answered with its error and `body` never runs.
    func authorized(passcode: String, encoder: ReplyEncoder, then body: @escaping () -> CallOutcome) -> CallOutcome {
        let promise = loop.makePromise(of: ByteBuffer.self)
        let success = encoder.empty()
        run(
            .authorizeRequested(hasPasscode: true, now: clock()),
            request: Agent.RequestContext(promise: promise, encoder: encoder, passcode: passcode))
        let loop = self.loop
        return .deferred(
            promise.futureResult.assumeIsolated().flatMap { reply -> EventLoopFuture<ByteBuffer> in
                // The machine answers an authorized check with the empty reply, a refusal with its error.
                guard reply == success else { return loop.makeSucceededFuture(reply) }
                switch body() {
                case .reply(let frame), .close(let frame): return loop.makeSucceededFuture(frame)
                case .deferred(let future): return future
                case .streaming: return loop.makeSucceededFuture(encoder.empty())
                }
            }.nonisolated())
    }
}
