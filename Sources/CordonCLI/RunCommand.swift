import ArgumentParser
import CordonProtocol
import CordonRun

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
        let session = RunSession(
            appId: app, socketPath: global.socketPath, command: command, freezeOnLock: freezeOnLock,
            cgroupParent: cgroupParent, tunnels: try tunnels.map { try Tunnel(parsing: $0) })
        let status: Int32
        do { status = try await session.run(note: Output.note) } catch let failure as ErrorText {
            throw CLIError(failure)
        }
        throw ExitCode(status)
    }
}
