import CordonKit
import CordonProtocol
import Foundation

/// Freezes and thaws a wrapped program with the container, acknowledging revocations once the
/// program is frozen; when cordond goes away the program stays frozen until it is back. What to do
/// with each event is `SupervisorDecider`'s (docs/ARCHITECTURE.md, "Freezing").
actor RunSupervisor {
    let program: WrappedProgram
    let appId: String
    let socketPath: String
    /// The `--tunnel` connections' gate: fed every event, so revocation cuts them
    /// (docs/ARCHITECTURE.md, "Pinned channel").
    let gate: ChannelGate?
    /// The tunnels' connector, set anew on every policy change.
    let upstream: TunnelUpstream?
    private let note: RunNote
    private var decider: SupervisorDecider
    private var current: CordonApp?

    init(
        program: WrappedProgram, appId: String, socketPath: String, freezeOnLock: Bool, gate: ChannelGate? = nil,
        upstream: TunnelUpstream? = nil, note: @escaping RunNote
    ) {
        self.program = program
        self.gate = gate
        self.upstream = upstream
        self.appId = appId
        self.socketPath = socketPath
        self.note = note
        decider = SupervisorDecider(freezeOnLock: freezeOnLock)
    }

    /// Follows `app`'s events until cancelled, registering again whenever cordond comes back.
    func follow(_ app: CordonApp) async {
        var app = app
        while !Task.isCancelled {
            current = app
            await handleEvents(of: app)
            await app.close()
            current = nil
            guard !Task.isCancelled else { return }
            note("cordon: cordond went away; the program stays frozen until it is back and unlocked")
            guard let again = await reconnect() else { return }
            app = again
        }
    }

    /// Applies each event to the program.
    private func handleEvents(of app: CordonApp) async {
        for await event in app.events {
            if Task.isCancelled { return }
            // The tunnels close before the program is frozen or the revocation acknowledged.
            gate?.follow(event)
            // A new policy reaches the tunnels at once: new pins, and open connections to servers
            // it refuses cut (each told on stderr by its cut).
            if case .policyDidChange = event.payload, let gate, let upstream {
                do { try await RunSession.followPolicy(app, upstream: upstream, gate: gate, note: note) } catch {
                    note("cordon: the tunnels refuse new connections: \(error)")
                }
            }
            switch decider.decide(event) {
            case .none: break
            case .thaw: program.thaw()
            case .freeze: program.freeze()
            case .freezeAndAcknowledge:
                program.freeze()
                try? await app.acknowledge(event, status: .halted)
            case .freezeAndReconnect:
                program.freeze()
                return
            case .note(let line): note(line)
            }
        }
    }

    /// Registers again once cordond answers; nil when cancelled.
    private func reconnect() async -> CordonApp? {
        while !Task.isCancelled {
            if let app = try? await CordonApp.connect(appId: appId, socketPath: socketPath, process: program.pid) {
                note("cordon: cordond is back")
                return app
            }
            try? await Task.sleep(for: .seconds(1))
        }
        return nil
    }

    /// Closes the registration.
    func close() async {
        await current?.close()
        current = nil
    }
}
