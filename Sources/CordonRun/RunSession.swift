import CordonKit
import CordonProtocol
import CordonSystem
import Dispatch
import Foundation

/// `cordon run`'s work once its command line is read (docs/ARCHITECTURE.md, "Freezing" and
/// "Pinned channel"): start the program frozen in a process group (and a cgroup, where one is
/// delegated) with its tunnels' listeners, register it with cordond on its behalf, freeze and thaw
/// it with the container, forward SIGINT, SIGTERM and SIGHUP to it, and clean up when it exits.
public struct RunSession: Sendable {
    /// The app id the program is registered as.
    public var appId: String
    /// cordond's socket.
    public var socketPath: String
    /// The program and its arguments.
    public var command: [String]
    /// Also freeze the program while the container is locked.
    public var freezeOnLock: Bool
    /// `--cgroup-parent`: a delegated cgroup directory or `none`; nil reads `CORDON_CGROUP_PARENT`.
    public var cgroupParent: String?
    /// The pinned tunnels the program gets.
    public var tunnels: [Tunnel]
    /// cordon run's environment, which the program inherits.
    public var environment: [String: String]

    /// A session; nothing starts until `run(note:)`.
    public init(
        appId: String, socketPath: String, command: [String], freezeOnLock: Bool = false,
        cgroupParent: String? = nil, tunnels: [Tunnel] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.appId = appId
        self.socketPath = socketPath
        self.command = command
        self.freezeOnLock = freezeOnLock
        self.cgroupParent = cgroupParent
        self.tunnels = tunnels
        self.environment = environment
    }

    /// Runs the program to its end and returns its exit code (128 + N when signal N ended it);
    /// the lines for the user go to `note`. Throws `ErrorText` when it cannot start, and the SDK's
    /// errors when cordond does not register it (the program is killed then).
    public func run(note: @escaping RunNote) async throws -> Int32 {
        let app = appId
        let socket = socketPath
        var environment = environment
        environment["CORDON_SOCKET"] = socket
        environment["CORDON_APP_ID"] = app
        // Handled here and forwarded, never acted on by cordon run itself.
        let forwarded = [SIGINT, SIGTERM, SIGHUP]
        for signal in forwarded { Foundation.signal(signal, SIG_IGN) }
        let parent: Cgroup?
        do {
            parent = try Cgroup.delegatedParent(override: cgroupParent ?? environment[Cgroup.parentEnvironmentKey])
        } catch {
            throw ErrorText(
                "--cgroup-parent: \(error)",
                hint: "give a directory of the cgroup2 hierarchy delegated to you, or none to freeze with signals",
                exit: .usage)
        }
        let gate = ChannelGate(appId: app)
        let upstream = TunnelUpstream()
        let tunnelSet = try await TunnelSet.start(
            tunnels, environment: environment, upstream: upstream, gate: gate, note: note)
        environment.merge(tunnelSet.environment) { $1 }
        let program = try WrappedProgram(
            arguments: command, environment: environment, cgroup: parent?.child("cordon-\(app)-\(getpid())"))
        program.freeze()
        program.takeTerminal()
        let sources = forwarded.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if let line = program.forward(number) { note(line) }
            }
            source.resume()
            return source
        }
        let supervisor = RunSupervisor(
            program: program, appId: app, socketPath: socket, freezeOnLock: freezeOnLock,
            gate: tunnels.isEmpty ? nil : gate, upstream: tunnels.isEmpty ? nil : upstream, note: note)
        let registered: CordonApp
        do {
            registered = try await CordonApp.connect(appId: app, socketPath: socket, process: program.pid)
            // Before the supervisor thaws the program: its tunnels know the policy from the start.
            if !tunnels.isEmpty { try await Self.followPolicy(registered, upstream: upstream, gate: gate, note: note) }
        } catch {
            program.terminate()
            program.returnTerminal()
            _ = await program.waitForExit()
            program.removeCgroup(note: note)
            await tunnelSet.close()
            throw error
        }
        let watcher = Task { await supervisor.follow(registered) }
        let status = await program.waitForExit()
        // Before the registration ends: what the program left is gone when cordond hears it end.
        program.removeCgroup(note: note)
        watcher.cancel()
        sources.forEach { $0.cancel() }
        program.returnTerminal()
        await supervisor.close()
        await tunnelSet.close()
        return status
    }

    /// The tunnels follow the app's network policy from the agent (`GetNetworkPolicy`): new
    /// connections get its pins (`upstream`), and open ones its server no longer satisfies are
    /// cut (`gate`, which also learns `network.onLock`). At the start and on every `PolicyDidChange`.
    static func followPolicy(_ app: CordonApp, upstream: TunnelUpstream, gate: ChannelGate, note: RunNote) async throws
    {
        let policy: NetworkPolicy
        do { policy = try await app.networkPolicy() } catch {
            upstream.refuse("the app's network policy cannot be read: \(error)")
            throw error
        }
        do { try upstream.set(policy: policy) } catch {
            // No connection under a policy the channel cannot use, old or new.
            await report(await gate.apply(policy), to: app, note: note)
            throw ErrorText("--tunnel: \(error)", hint: "fix the network policy")
        }
        await report(await gate.apply(policy), to: app, note: note)
    }

    /// Writes the connections a policy change cut to the agent's audit log (each was told on
    /// stderr by its cut); a failure to report is told there too.
    private static func report(_ cuts: [SecureChannelError], to app: CordonApp, note: RunNote) async {
        guard !cuts.isEmpty else { return }
        do { try await app.reportChannelCuts(cuts) } catch {
            note("cordon: the agent did not record the \(cuts.count) connection(s) the policy change cut: \(error)")
        }
    }
}
