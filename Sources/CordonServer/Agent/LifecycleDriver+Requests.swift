import CordonLifecycle
import CordonProtocol
import NIOCore

extension LifecycleDriver {
    /// Runs a lifecycle request for a call; answered at once, or later for a passcode check.
    func request(
        _ input: LifecycleInput, _ encoder: ReplyEncoder, _ configure: (inout LifecycleRequest) -> Void = { _ in }
    ) -> CallOutcome {
        var context = LifecycleRequest(promise: loop.makePromise(), encoder: encoder)
        configure(&context)
        run(input, request: context)
        return .deferred(context.promise.futureResult)
    }

    /// Runs `body` once the passcode is checked, and counted like `Unlock`'s, by the lifecycle
    /// machine (`authorizeRequested`): what an administrator's call naming an app (storage, tokens)
    /// needs. A refusal (a wrong passcode, a lockout) is answered with its error and `body` never runs.
    func authorized(passcode: String, encoder: ReplyEncoder, then body: @escaping () -> CallOutcome) -> CallOutcome {
        let promise = loop.makePromise(of: ByteBuffer.self)
        let success = encoder.empty()
        run(
            .authorizeRequested(hasPasscode: true, now: clock()),
            request: LifecycleRequest(promise: promise, encoder: encoder, passcode: passcode))
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
