import ArgumentParser
import CordonFleetAdmin

/// `cordon fleet rotate DIR --role ROLE [--root-key FILE…]`.
struct FleetRotateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Replace a role's keys with new ones (after a compromise, or as routine).",
        discussion: """
            timestamp, snapshot, targets: a new root lists the new keys (--root-key); root: a new root \
            signed by the old keys (--root-key) and the new ones; commands: a new targets delegates to \
            the new key. The role is then re-signed. Replaced online keys are deleted from keys/.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("root, timestamp, snapshot, targets or commands.", valueName: "role"))
    var role: FleetRole

    @OptionGroup var root: FleetRootKeyOptions

    func run() async throws {
        var fleet = try workspace.open()
        let result = try fleet.rotate(role, rootKeys: root.rootKeys)
        try FleetKeyCommands.print(result, fleet)
        if role == .root {
            try Output.line("move the new root key(s) offline; the old root keys are no longer trusted: destroy them")
        }
    }
}

/// `cordon fleet add-key DIR --role ROLE [--out FILE] [--root-key FILE…]`.
struct FleetAddKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-key",
        abstract: "Add a new key to a role (e.g. a second admin's command key); the threshold is kept.")

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("root, timestamp, snapshot, targets or commands.", valueName: "role"))
    var role: FleetRole

    @Option(help: ArgumentHelp("Where to write the key (default: keys/ in the workspace).", valueName: "file"))
    var out: String?

    @OptionGroup var root: FleetRootKeyOptions

    func run() async throws {
        var fleet = try workspace.open()
        try FleetKeyCommands.print(try fleet.addKey(role, out: out, rootKeys: root.rootKeys), fleet)
    }
}

/// `cordon fleet threshold DIR (--role ROLE --threshold N | --wipe-threshold N)`.
struct FleetThresholdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "threshold",
        abstract: "Change how many keys of a role must sign, or the root's wipe threshold.")

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("The role whose threshold changes.", valueName: "role"))
    var role: FleetRole?

    @Option(help: ArgumentHelp("The role's new threshold.", valueName: "n"))
    var threshold: Int?

    @Option(help: ArgumentHelp("The new wipe threshold (command keys for a wipe of several machines).", valueName: "n"))
    var wipeThreshold: Int?

    @OptionGroup var root: FleetRootKeyOptions

    @Option(help: ArgumentHelp("Another command key file; repeatable.", valueName: "file"))
    var commandKey: [String] = []

    func run() async throws {
        var fleet = try workspace.open()
        if let wipeThreshold, role == nil, threshold == nil {
            try FleetKeyCommands.print(try fleet.setWipeThreshold(wipeThreshold, rootKeys: root.rootKeys), fleet)
        } else if let role, let threshold, wipeThreshold == nil {
            try FleetKeyCommands.print(
                try fleet.setThreshold(role, threshold, rootKeys: root.rootKeys, commandKeys: commandKey), fleet)
        } else {
            throw CLIError(
                "give --role ROLE --threshold N, or --wipe-threshold N", hint: "e.g. --role root --threshold 2",
                code: .usage)
        }
    }
}

/// `cordon fleet renew-root DIR --root-key FILE…`.
struct FleetRenewRootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renew-root",
        abstract: "Sign the root again as a new version with a new expiry (before it expires).")

    @OptionGroup var workspace: FleetWorkspaceArgument
    @OptionGroup var root: FleetRootKeyOptions

    func run() async throws {
        var fleet = try workspace.open()
        try FleetKeyCommands.print(try fleet.renewRoot(rootKeys: root.rootKeys), fleet)
    }
}

/// Shared output of the key commands.
enum FleetKeyCommands {
    static func print(_ result: FleetKeyResult, _ fleet: FleetWorkspace) throws {
        for (role, path) in result.written { try Output.line("new \(role.rawValue) key: \(FleetFormat.path(path))") }
        for path in result.removed { try Output.line("removed \(FleetFormat.path(path))") }
        try Output.line("now \(FleetFormat.versions(result.versions)); upload \(FleetFormat.path(fleet.repository))/")
    }
}
