import ArgumentParser
import CordonKit
import CordonProtocol
import CordonSystem
import Dispatch
import Foundation

/// `cordon run --app ID -- program args…`: quick integration for an unmodified program.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an unmodified program as a wrapped app: frozen whenever the container has no key.",
        discussion: """
            Starts the program in a process group of its own with CORDON_SOCKET and CORDON_APP_ID set, \
            registers it with cordond on its behalf (the policy checks the program's executable, not cordon's), \
            and freezes it while the key is unavailable, thawing it when the key returns; with --freeze-on-lock \
            also while the container is locked. Where a cgroup v2 subtree is delegated to the user (cordon run's \
            own cgroup, or --cgroup-parent), the program starts in a cgroup of its own, \
            PARENT/cordon-APPID-PID, frozen with cgroup.freeze: its children, setsid ones too, freeze with it \
            and a SIGCONT does not thaw it; what it leaves there when it exits is killed and the cgroup removed. \
            Elsewhere the whole process group is stopped (SIGSTOP) and continued (SIGCONT). The program starts frozen \
            until cordond says the key is available. SIGINT, SIGTERM and SIGHUP are forwarded to the group; \
            a second SIGINT or SIGTERM while it is frozen kills it. Exits with the program's exit code \
            (128 + N when signal N ended it). If cordon run itself is killed, cordond thaws and terminates \
            the program.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The app id to register the program as.", valueName: "app-id"))
    var app: String

    @Flag(help: "Also freeze the program while the container is locked (not only while the key is unavailable).")
    var freezeOnLock = false

    @Option(
        help: ArgumentHelp(
            "The delegated cgroup v2 directory to create the program's cgroup in, or none to freeze it with "
                + "signals (default: CORDON_CGROUP_PARENT, else cordon run's own cgroup when it is writable).",
            valueName: "dir|none"))
    var cgroupParent: String?

    @Option(
        name: .customLong("tunnel"),
        help: ArgumentHelp(
            "A pinned TLS tunnel to https://host:port, verified by the app's network policy: the program gets "
                + "CORDON_TUNNEL_<NAME>=unix:PATH and CORDON_TUNNEL_<NAME>_TCP=127.0.0.1:PORT (repeatable).",
            valueName: "NAME=https://host:port"))
    var tunnels: [String] = []

    @Argument(parsing: .postTerminator, help: "The program and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the program to run after --, e.g. -- vim notes.txt") }
        if let problem = AppIdentifier.problem(with: app) { throw ValidationError("--app: \(problem)") }
        var names = Set<String>()
        for text in tunnels {
            do {
                let tunnel = try Tunnel(parsing: text)
                guard names.insert(tunnel.name.uppercased()).inserted else {
                    throw ValidationError(
                        "--tunnel \(text): a tunnel named \(tunnel.name.uppercased()) is already given")
                }
            } catch let error as TunnelSpecError { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let socket = global.socketPath
        var environment = ProcessInfo.processInfo.environment
        environment["CORDON_SOCKET"] = socket
        environment["CORDON_APP_ID"] = app
        // Handled here and forwarded, never acted on by cordon run itself.
        let forwarded = [SIGINT, SIGTERM, SIGHUP]
        for signal in forwarded { Foundation.signal(signal, SIG_IGN) }
        let parent: Cgroup?
        do {
            parent = try Cgroup.delegatedParent(override: cgroupParent ?? environment[Cgroup.parentEnvironmentKey])
        } catch {
            throw CLIError(
                "--cgroup-parent: \(error)",
                hint: "give a directory of the cgroup2 hierarchy delegated to you, or none to freeze with signals",
                code: .usage)
        }
        let tunnels = try self.tunnels.map { try Tunnel(parsing: $0) }
        let gate = ChannelGate(appId: app)
        let upstream = TunnelUpstream()
        let tunnelSet = try await TunnelSet.start(
            tunnels, environment: environment, upstream: upstream, gate: gate)
        environment.merge(tunnelSet.environment) { $1 }
        let program = try WrappedProgram(
            arguments: command, environment: environment, cgroup: parent?.child("cordon-\(app)-\(getpid())"))
        program.freeze()
        program.takeTerminal()
        let sources = forwarded.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if let note = program.forward(number) { Output.note(note) }
            }
            source.resume()
            return source
        }
        let supervisor = RunSupervisor(
            program: program, appId: app, socketPath: socket, freezeOnLock: freezeOnLock,
            gate: tunnels.isEmpty ? nil : gate)
        let registered: CordonApp
        do {
            registered = try await CordonApp.connect(appId: app, socketPath: socket, process: program.pid)
            // Before the supervisor thaws the program: its tunnels know the policy from the start.
            if !tunnels.isEmpty { upstream.set(try await tunnelConnector(registered)) }
        } catch {
            program.terminate()
            program.returnTerminal()
            _ = await program.waitForExit()
            program.removeCgroup()
            await tunnelSet.close()
            throw error
        }
        let watcher = Task { await supervisor.follow(registered) }
        let status = await program.waitForExit()
        // Before the registration ends: what the program left is gone when cordond hears it end.
        program.removeCgroup()
        watcher.cancel()
        sources.forEach { $0.cancel() }
        program.returnTerminal()
        await supervisor.close()
        await tunnelSet.close()
        throw ExitCode(status)
    }

    /// The tunnels' connector: the app's network policy from the agent (`GetNetworkPolicy`).
    private func tunnelConnector(_ app: CordonApp) async throws -> ChannelConnector {
        let policy = try await app.networkPolicy()
        do { return try ChannelConnector(verifier: ChannelVerifier(policy: policy), alpn: []) } catch {
            throw CLIError("--tunnel: \(error)", hint: "fix the network policy", code: .failure)
        }
    }
}
