import ArgumentParser
import CordonFleet
import CordonFleetAdmin
import Foundation

/// `cordon fleet init DIR`: a new workspace and repository.
struct FleetInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a fleet workspace: keys for every role, and root, targets, commands, snapshot, timestamp v1.",
        discussion: """
            Writes DIR/keys/<role>-<keyid>.key (mode 0600, with a .pub beside each), DIR/fleet.json and \
            DIR/repository/. Move the root keys offline afterwards: every command that changes the root \
            takes --root-key FILE.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("How many root keys to make.", valueName: "n"))
    var rootKeys = 1

    @Option(help: ArgumentHelp("How many root keys must sign a new root.", valueName: "n"))
    var rootThreshold = 1

    @Option(
        help: ArgumentHelp("How many distinct command keys must sign a wipe of more than one machine.", valueName: "n"))
    var wipeThreshold = 2

    @Option(help: ArgumentHelp("How long a root stays valid.", valueName: "duration"))
    var rootExpiry = "365d"

    @Option(help: ArgumentHelp("How long a timestamp stays valid (re-sign it more often).", valueName: "duration"))
    var timestampExpiry = "1d"

    @Option(help: ArgumentHelp("How long snapshot, targets and commands stay valid.", valueName: "duration"))
    var metadataExpiry = "30d"

    func run() async throws {
        var options = FleetInitOptions()
        options.rootKeys = rootKeys
        options.rootThreshold = rootThreshold
        options.wipeThreshold = wipeThreshold
        for (flag, text, roles) in [
            ("--root-expiry", rootExpiry, [FleetRole.root]), ("--timestamp-expiry", timestampExpiry, [.timestamp]),
            ("--metadata-expiry", metadataExpiry, [.snapshot, .targets, .commands]),
        ] {
            guard let seconds = FleetDuration.parse(text) else {
                throw CLIError("\(flag) \"\(text)\" is not a duration", hint: "e.g. 1d, 12h, 30d, 1y", code: .usage)
            }
            for role in roles { options.expiry[role] = seconds }
        }
        let result = try FleetWorkspace.create(at: workspace.directory, options: options)
        let ledger = result.workspace.ledger
        try Output.line("created the fleet workspace \(FleetFormat.path(result.workspace.directory))")
        var rows: [[String]] = []
        for (role, path) in result.keyFiles {
            let state = ledger.role(role)
            rows.append([
                role.rawValue, "v\(state.version)", "expires \(state.expires)", FleetFormat.path(path),
            ])
        }
        for line in Format.table(rows) { try Output.line("  " + line) }
        try Output.line(
            "wipe threshold: \(ledger.wipeThreshold) command key(s) must sign a wipe of more than one machine")
        try Output.line("upload \(FleetFormat.path(result.workspace.repository))/ as it is to your HTTPS host;")
        try Output.line(
            "give every machine \(FleetFormat.path(result.workspace.repository))/1.root.json as its trusted root.")
        let roots = result.keyFiles.filter { $0.role == .root }.map { FleetFormat.path($0.path) }
        try Output.line(
            "now move \(roots.joined(separator: " ")) offline (an encrypted USB key in a safe) and delete it here: "
                + "commands that change the root take --root-key FILE")
        if ledger.wipeThreshold > 1 {
            try Output.line(
                "a second admin's command key: `cordon fleet add-key \(workspace.directory) --role commands --out FILE`"
            )
        }
    }
}
