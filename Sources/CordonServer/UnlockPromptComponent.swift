import CordonLifecycle
import CordonProtocol
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
final class UnlockPromptComponent: AgentComponent {
    let methods: [Method] = [.requestUnlock]

    /// The longest a `RequestUnlock` may wait, and its default.
    static let maxUnlockWaitSeconds = 600
    static let defaultUnlockWaitSeconds = 120

    private unowned let host: any ComponentHost
    /// Implicit unlocks waiting for the user.
    private var unlockWaiters: [UnlockWaiter] = []
    private var unlockWaiterCounter = 0
    /// The passcode prompt started for them: `cordon unlock --pinentry-only`, which speaks
    /// Assuan to the user's pinentry and unlocks over the socket.
    private var unlockPrompt: Process?

    init(host: any ComponentHost) {
        self.host = host
    }

    private var loop: any EventLoop { host.loop }
    private var logger: Logger { host.logger }
    private var configuration: AgentConfiguration { host.configuration }

    func serve(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(RequestUnlockParameters.self)
        return try typed { () throws(CordonError) in
            try requestUnlock(parameters, connection: call.connection, encoder: call.encoder)
        }
    }

    func observe(_ event: CordonEvent) { unlockWaitersObserve(event) }

    func connectionClosed(_ id: ConnectionID) { unlockWaitersClosed(id) }

    func shutdown() {
        if let prompt = unlockPrompt, prompt.isRunning { kill(prompt.processIdentifier, SIGTERM) }
        unlockPrompt = nil
    }

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
            request: Agent.RequestContext(promise: loop.makePromise(), encoder: encoder))
        if host.lifecycleState == .unlocked {
            return .reply(encoder.reply(RequestUnlockReply(state: .unlocked, prompted: false)))
        }
        let requester = registration.appId
        let seconds = min(max(parameters.timeoutSeconds ?? Self.defaultUnlockWaitSeconds, 1), Self.maxUnlockWaitSeconds)
        let promise = loop.makePromise(of: ByteBuffer.self)
        unlockWaiterCounter += 1
        let id = unlockWaiterCounter
        let timeout = loop.assumeIsolated().scheduleTask(in: .seconds(Int64(seconds))) { [self] in
            finishWaiters(where: { $0.id == id }, with: .failure(.unlockTimedOut(seconds: Double(seconds))))
        }
        unlockWaiters.append(
            UnlockWaiter(id: id, connection: connection.id, promise: promise, encoder: encoder, timeout: timeout))
        if unlockPrompt == nil {
            startUnlockPrompt(requester: requester, requesterPid: connection.identity.pid)
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
        let prompted = unlockPrompt != nil
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
        if unlockWaiters.isEmpty, let prompt = unlockPrompt {
            unlockPrompt = nil
            if prompt.isRunning { kill(prompt.processIdentifier, SIGTERM) }
        }
    }

    /// Starts `cordon unlock --pinentry-only` for the waiting apps, with the requester's display.
    private func startUnlockPrompt(requester: String, requesterPid: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: configuration.promptProgram)
        process.arguments = [
            "--socket", configuration.paths.socketPath, "unlock", "--pinentry-only", "--requested-by", requester,
        ]
        process.environment = Self.promptEnvironment(
            agent: ProcessInfo.processInfo.environment, requesterPid: requesterPid,
            configDirectory: configuration.paths.configDirectory)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        // Runs on Foundation's thread: it reaches the agent only back on the loop.
        let component = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        process.terminationHandler = { finished in
            let output = errors.fileHandleForReading.readDataToEndOfFile()
            let status = finished.terminationStatus
            loop.execute { component.value.unlockPromptEnded(finished, status: status, output: output) }
        }
        do {
            try process.run()
            unlockPrompt = process
            logger.notice(
                "implicit unlock: prompting the user",
                metadata: ["requestedBy": "\(requester)", "pid": "\(requesterPid)"])
        } catch {
            logger.warning("implicit unlock: cannot start the prompt", metadata: ["error": "\(error)"])
            finishWaiters(
                where: { _ in true },
                with: .failure(.unlockUnavailable(reason: "cannot start \(configuration.promptProgram): \(error)")))
        }
    }

    private func unlockPromptEnded(_ prompt: Process, status: Int32, output: Data) {
        guard unlockPrompt === prompt else { return }
        unlockPrompt = nil
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

    /// The agent's environment, with the requester's display variables (its session may have
    /// them when the agent's does not), its terminal (`CORDON_PROMPT_TTY`) and the agent's config
    /// directory (for settings.json).
    static func promptEnvironment(agent: [String: String], requesterPid: Int32, configDirectory: String)
        -> [String: String]
    {
        var environment = agent
        if let data = FileManager.default.contents(atPath: "/proc/\(requesterPid)/environ") {
            for entry in data.split(separator: 0) {
                let text = String(decoding: entry, as: UTF8.self)
                guard let equals = text.firstIndex(of: "=") else { continue }
                let key = String(text[..<equals])
                if ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"].contains(key) {
                    environment[key] = String(text[text.index(after: equals)...])
                }
            }
        }
        // A terminal-only session: pinentry (curses) may ask on the requester's terminal.
        if let terminal = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(requesterPid)/fd/0"),
            terminal.hasPrefix("/dev/pts/") || terminal.hasPrefix("/dev/tty")
        {
            environment["CORDON_PROMPT_TTY"] = terminal
        }
        environment["CORDON_CONFIG_DIR"] = configDirectory
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.removeValue(forKey: "LISTEN_FDS")
        environment.removeValue(forKey: "LISTEN_PID")
        return environment
    }
}
