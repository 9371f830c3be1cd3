import CordonKit
import CordonProtocol
import Foundation

/// Freezes and thaws a wrapped program with the container, acknowledging revocations once the
/// program is frozen; when cordond goes away the program stays frozen until it is back.
actor RunSupervisor {
    let program: WrappedProgram
    let appId: String
    let socketPath: String
    let freezeOnLock: Bool
    /// The `--tunnel` connections' gate: fed every event, so revocation cuts them
    /// (docs/ARCHITECTURE.md, "Pinned channel").
    let gate: ChannelGate?
    private var current: CordonApp?
    /// The device's posture revoked the app's key (reason `posture`): the program stays frozen,
    /// whatever the container does, until the agent gives the key back with reason `posture`.
    private var postureBlocked = false

    init(program: WrappedProgram, appId: String, socketPath: String, freezeOnLock: Bool, gate: ChannelGate? = nil) {
        self.program = program
        self.gate = gate
        self.appId = appId
        self.socketPath = socketPath
        self.freezeOnLock = freezeOnLock
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
            Output.note("cordon: cordond went away; the program stays frozen until it is back and unlocked")
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
            switch event.kind {
            case .state, .encryptionKeyAvailable, .didUnlock:
                if event.kind == .encryptionKeyAvailable && event.reason == .posture { postureBlocked = false }
                if event.keyAvailable && (!freezeOnLock || event.state == .unlocked) && !postureBlocked {
                    program.thaw()
                }
            case .encryptionKeyUnavailable:
                if event.reason == .posture { postureBlocked = true }
                // A new agent says the posture anew when the supervisor registers again.
                if event.reason == .agentUnavailable { postureBlocked = false }
                program.freeze()
                guard event.reason != .agentUnavailable else { return }
                try? await app.acknowledge(event, status: .halted)
            case .didLock:
                if freezeOnLock { program.freeze() }
            case .wiped:
                program.freeze()
            case .postureWarning:
                let checks = (event.posture ?? []).map { "\($0.check.rawValue) (\($0.evidence))" }
                Output.note("cordon: device posture warning: \(checks.joined(separator: ", "))")
            case .policyDidChange, .appEnforced, .openDocument, .didSignOut:
                break
            }
        }
    }

    /// Registers again once cordond answers; nil when cancelled.
    private func reconnect() async -> CordonApp? {
        while !Task.isCancelled {
            if let app = try? await CordonApp.connect(appId: appId, socketPath: socketPath, process: program.pid) {
                Output.note("cordon: cordond is back")
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
