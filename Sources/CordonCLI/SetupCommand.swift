import ArgumentParser
import CordonSystem
import Foundation

/// `cordon setup --user`: installs the systemd user units for the installed cordond.
struct SetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Install the systemd user units (cordond.socket, cordond.service) for the installed cordond.",
        discussion: """
            Writes the units with ExecStart pointing at cordond (by default the one next to this
            cordon), creates the directories the sandboxed service may write, and prints how to
            enable socket activation with systemctl --user.
            """)

    @Flag(help: "Install user units (the only mode: cordond is a per-user agent).")
    var user = false
    @Option(help: "Where to write the units (default: $XDG_CONFIG_HOME/systemd/user).")
    var unitDir: String?
    @Option(help: "The cordond binary the service runs (default: the cordond next to this cordon).")
    var cordondPath: String?

    func validate() throws {
        guard user else {
            throw ValidationError("cordond is a per-user agent: run `cordon setup --user`")
        }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        let directory = unitDir ?? Self.defaultUnitDirectory(environment: environment, home: home)
        let binary = cordondPath ?? Self.siblingCordond()
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw CLIError(
                "\(binary) is not an executable cordond",
                hint: "install it first (`make install`) or pass --cordond-path", code: .usage)
        }
        guard !binary.contains(where: { $0.isWhitespace }) else {
            throw CLIError("\(binary) contains whitespace", hint: "install cordond in a path without spaces")
        }
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try SystemdUnits.socket.write(toFile: directory + "/cordond.socket", atomically: true, encoding: .utf8)
        try SystemdUnits.service(cordondPath: binary).write(
            toFile: directory + "/cordond.service", atomically: true, encoding: .utf8)
        // The service's sandbox (ProtectSystem=strict) can only write directories that exist.
        for path in SystemdUnits.writableDirectories(home: home) {
            try manager.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try Output.line(SystemdUnits.enableInstructions(unitDirectory: directory))
    }

    /// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
    static func defaultUnitDirectory(environment: [String: String], home: String) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/systemd/user"
        }
        return home + "/.config/systemd/user"
    }

    /// The cordond installed next to this cordon executable.
    static func siblingCordond() -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("cordond").path
    }
}
