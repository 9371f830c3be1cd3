import CordonLifecycle
import CordonProtocol
import CordonSystem
import Dispatch
import Foundation
import Logging
import NIOCore

/// One `RequestUnlock` call waiting for the container to unlock.
struct UnlockWaiter {
    let id: Int
    let connection: ConnectionID
    let promise: EventLoopPromise<ByteBuffer>
    let encoder: ReplyEncoder
    let timeout: Scheduled<Void>
}

/// Implicit unlock (`io.cordon.App.RequestUnlock`): within the grace the container unlocks at
/// once; otherwise one prompt (`cordon unlock --pinentry-only`) asks the user for every waiting
/// app, and each waiter is answered when the container unlocks, the user cancels, or its time is up.
///
/// The prompt is the agent's, not the caller's: the pinentry comes from the admin settings or
/// the system (`PromptPinentry`), the display from the user's logind session or the agent's own
/// environment (`PromptDisplay`), and the app it names from a registration the caller's process
/// made (`UnlockPrompt.requester`); docs/ARCHITECTURE.md, "Components".
final class UnlockPromptComponent: AgentComponent {
    /// The longest a `RequestUnlock` may wait, and its default.
    static let maxUnlockWaitSeconds = 600
    static let defaultUnlockWaitSeconds = 120

    /// Where the prompt is: choosing its pinentry and display (off the loop: logind is asked
    /// over the bus), or running.
    enum PromptState {
        case none
        case preparing(Int)
        case running(PromptProcess)
    }

    private unowned let host: any ComponentHost
    /// Implicit unlocks waiting for the user.
    private var unlockWaiters: [UnlockWaiter] = []
    private var unlockWaiterCounter = 0
    /// The passcode prompt started for them: `cordon unlock --pinentry-only`, which speaks
    /// Assuan to the pinentry and unlocks over the socket.
    private var prompt = PromptState.none
    /// The agent's environment at start: the prompt's, never a caller's.
    private let agentEnvironment = ProcessInfo.processInfo.environment

    init(host: any ComponentHost) {
        self.host = host
    }

    private var loop: any EventLoop { host.loop }
    private var logger: Logger { host.logger }
    private var configuration: AgentConfiguration { host.configuration }

    /// Serves `io.cordon.App.RequestUnlock`.
    func serveRequestUnlock(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(RequestUnlockParameters.self)
        return try typed { () throws(CordonError) in
            try requestUnlock(parameters, connection: call.connection, encoder: call.encoder)
        }
    }

    func observe(_ event: CordonEvent) { unlockWaitersObserve(event) }

    func connectionClosed(_ id: ConnectionID) { unlockWaitersClosed(id) }

    func shutdown() { endPrompt() }

    /// `io.cordon.App.RequestUnlock`: unlocks at once within the grace; otherwise prompts the
    /// user (once for every waiting app) and answers when the container unlocks, the user
    /// cancels, or the time is up.
    private func requestUnlock(
        _ parameters: RequestUnlockParameters, connection: AgentConnection, encoder: ReplyEncoder
    )
        throws(CordonError) -> CallOutcome
    {
        // Implicit unlock is for verified managed apps only: it may unlock without the passcode
        // within the grace, and it shows the app's id in a prompt (docs/THREAT-MODEL.md).
        let registration = try host.verifiedRegistration(
            token: parameters.token, caller: connection, for: .activity)
        switch host.lifecycleState {
        case .uninitialized: throw .notInitialized
        case .unlocked: return .reply(encoder.reply(RequestUnlockReply(state: .unlocked, prompted: false)))
        case .lockedKeyHeld, .lockedNoKey: break
        }
        // Within the grace the machine unlocks without a passcode; outside it refuses, and the
        // refusal (written to a promise nobody reads) is dropped.
        host.run(.activity(now: host.clock()))
        host.run(
            .unlockRequested(hasPasscode: false, now: host.clock()),
            request: LifecycleRequest(promise: loop.makePromise(), encoder: encoder))
        if host.lifecycleState == .unlocked {
            return .reply(encoder.reply(RequestUnlockReply(state: .unlocked, prompted: false)))
        }
        // Only a verified managed registration reaches here: the prompt names its app id alone.
        let requester = UnlockPrompt.Requester.managed(registration.appId)
        let seconds = min(max(parameters.timeoutSeconds ?? Self.defaultUnlockWaitSeconds, 1), Self.maxUnlockWaitSeconds)
        let promise = loop.makePromise(of: ByteBuffer.self)
        unlockWaiterCounter += 1
        let id = unlockWaiterCounter
        let timeout = loop.assumeIsolated().scheduleTask(in: .seconds(Int64(seconds))) { [self] in
            finishWaiters(where: { $0.id == id }, with: .failure(.unlockTimedOut(seconds: Double(seconds))))
        }
        unlockWaiters.append(
            UnlockWaiter(id: id, connection: connection.id, promise: promise, encoder: encoder, timeout: timeout))
        if case .none = prompt {
            preparePrompt(id: id, requester: requester, requesterPid: connection.identity.pid)
        }
        return .deferred(promise.futureResult)
    }

    /// Answers the waiters when the container unlocks; a wipe ends them.
    private func unlockWaitersObserve(_ event: CordonEvent) {
        switch event.kind {
        case .didUnlock:
            finishWaiters(where: { _ in true }, with: .success(()))
        case .wiped:
            finishWaiters(where: { _ in true }, with: .failure(.notInitialized))
        default:
            break
        }
    }

    /// A closed connection's waiters are dropped.
    private func unlockWaitersClosed(_ id: ConnectionID) {
        guard unlockWaiters.contains(where: { $0.connection == id }) else { return }
        finishWaiters(where: { $0.connection == id }, with: .failure(.unlockCancelled))
    }

    private func finishWaiters(where matches: (UnlockWaiter) -> Bool, with result: Result<Void, CordonError>) {
        var prompted = false
        if case .running = prompt { prompted = true }
        let finished = unlockWaiters.filter(matches)
        unlockWaiters.removeAll(where: matches)
        for waiter in finished {
            waiter.timeout.cancel()
            switch result {
            case .success:
                waiter.promise.succeed(
                    waiter.encoder.reply(RequestUnlockReply(state: host.lifecycleState, prompted: prompted)))
            case .failure(let error):
                waiter.promise.succeed(waiter.encoder.error(error.varlinkError))
            }
        }
        if unlockWaiters.isEmpty { endPrompt() }
    }

    /// Stops the prompt, or forgets the one being prepared.
    private func endPrompt() {
        if case .running(let process) = prompt { process.terminate() }
        prompt = .none
    }

    /// Chooses the pinentry and the display off the loop (files are checked and logind is asked),
    /// then starts the prompt for the waiting apps.
    private func preparePrompt(id: Int, requester: UnlockPrompt.Requester, requesterPid: Int32) {
        prompt = .preparing(id)
        let configuration = self.configuration
        let (agent, logger) = (agentEnvironment, self.logger)
        // Runs on a global queue: it reaches the agent only back on the loop.
        let component = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        DispatchQueue.global().async {
            let chosen = Self.choose(configuration: configuration, agent: agent, logger: logger)
            let prepared = chosen.map {
                UnlockPrompt(
                    program: configuration.promptProgram, socketPath: configuration.paths.socketPath,
                    pinentry: $0.pinentry.path, requester: requester, display: $0.display, pinentryProgram: $0.pinentry)
            }
            loop.execute { component.value.promptPrepared(id: id, prepared, requesterPid: requesterPid) }
        }
    }

    /// The pinentry and the display for a prompt, or why there can be none: the display of the
    /// user's logind session, else (no bus, no session, or one without a display or terminal) of
    /// the agent's environment; the pinentry of the admin settings, else the system's.
    static func choose(configuration: AgentConfiguration, agent: [String: String], logger: Logger)
        -> Result<(pinentry: AdminPath, display: PromptDisplay), CordonError>
    {
        var display = PromptDisplay.agent(agent)
        if let bus = configuration.lockTriggers {
            do {
                let session = try LogindSession.lookUp(
                    systemBus: bus.system, sessionID: bus.sessionID, uid: configuration.allowedUID)
                let shown = PromptDisplay.session(session, agent: agent)
                if !shown.isEmpty { display = shown }
            } catch {
                logger.info(
                    "implicit unlock: no logind session, using the agent's environment",
                    metadata: ["error": "\(error)"])
            }
        }
        guard !display.isEmpty else {
            return .failure(
                .unlockUnavailable(
                    reason: "no display or terminal to ask on: \(display.source) has no DISPLAY, "
                        + "WAYLAND_DISPLAY or terminal; run `cordon unlock`"))
        }
        switch PromptPinentry.resolve(
            adminSettings: configuration.adminSettingsPath, opened: configuration.openedAdminSettings)
        {
        case .success(let pinentry): return .success((pinentry, display))
        case .failure(let problem): return .failure(.unlockUnavailable(reason: problem.description))
        }
    }

    /// The pinentry and display are chosen: starts the prompt if the waiters still want it.
    private func promptPrepared(id: Int, _ chosen: Result<UnlockPrompt, CordonError>, requesterPid: Int32) {
        guard case .preparing(id) = prompt else { return }
        prompt = .none
        switch chosen {
        case .failure(let error):
            logger.warning("implicit unlock: cannot prompt", metadata: ["error": "\(error)"])
            finishWaiters(where: { _ in true }, with: .failure(error))
        case .success(let unlockPrompt):
            startPrompt(unlockPrompt, requesterPid: requesterPid)
        }
    }

    /// Starts `cordon unlock --pinentry-only` for the waiting apps.
    private func startPrompt(_ unlockPrompt: UnlockPrompt, requesterPid: Int32) {
        // The pinentry goes as the prompt's standard input, the descriptor opened and checked
        // (`PromptPinentry`): `cordon unlock --pinentry-from-stdin` runs that file, not a name.
        // A prompt program named as an admin input runs through its descriptor too.
        let component = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        do {
            let process = try PromptProcess.start(
                path: unlockPrompt.program, program: configuration.openedPromptProgram,
                arguments: unlockPrompt.arguments, environment: unlockPrompt.environment(agent: agentEnvironment),
                input: unlockPrompt.pinentryProgram?.descriptor)
            prompt = .running(process)
            // Called on the process's own thread: it reaches the agent only back on the loop.
            process.whenEnded { status, output in
                loop.execute { component.value.unlockPromptEnded(process, status: status, output: output) }
            }
            logger.notice(
                "implicit unlock: prompting the user",
                metadata: [
                    "requestedBy": "\(unlockPrompt.requester.logName)", "pid": "\(requesterPid)",
                    "pinentry": "\(unlockPrompt.pinentry)", "display": "\(unlockPrompt.display.source)",
                ])
        } catch {
            logger.warning("implicit unlock: cannot start the prompt", metadata: ["error": "\(error)"])
            finishWaiters(
                where: { _ in true },
                with: .failure(.unlockUnavailable(reason: "cannot start \(unlockPrompt.program): \(error)")))
        }
    }

    private func unlockPromptEnded(_ ended: PromptProcess, status: Int32, output: Data) {
        guard case .running(let process) = prompt, process === ended else { return }
        prompt = .none
        let message =
            String(decoding: output, as: UTF8.self).split(separator: "\n").first.map(String.init)
            ?? "exit status \(status)"
        logger.info("implicit unlock: the prompt ended", metadata: ["status": "\(status)"])
        guard host.lifecycleState != .unlocked else { return }
        switch status {
        case 8: finishWaiters(where: { _ in true }, with: .failure(.unlockCancelled))
        default: finishWaiters(where: { _ in true }, with: .failure(.unlockUnavailable(reason: message)))
        }
    }
}
