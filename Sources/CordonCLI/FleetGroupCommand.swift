import ArgumentParser
import CordonFleet
import CordonFleetAdmin
import Foundation

/// `cordon fleet`: the admin's side of the fleet repository (docs/FLEET.md).
struct FleetGroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Create and maintain a fleet's signed repository: policies and commands for many machines.",
        discussion: """
            A workspace directory holds repository/ (the static files to upload to any HTTPS host), \
            fleet.json (versions, expiries, keys, device counters) and keys/ (the online roles' private \
            keys). Root keys belong offline: commands that change the root take --root-key FILE. These \
            commands run on the admin's machine; no cordond, no root needed.
            """,
        subcommands: [
            FleetInitCommand.self, FleetPublishCommand.self, FleetIssueCommand.self, FleetTimestampCommand.self,
            FleetRotateCommand.self, FleetAddKeyCommand.self, FleetThresholdCommand.self, FleetRenewRootCommand.self,
            FleetStatusCommand.self, FleetVerifyReportCommand.self, FleetPushKeyCommand.self, FleetRingCommand.self,
            FleetReportsCommand.self,
        ])
}

extension FleetRole: ExpressibleByArgument {}

/// The workspace argument every `cordon fleet` subcommand takes.
struct FleetWorkspaceArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("The fleet workspace directory.", valueName: "dir"))
    var directory: String

    func open() throws -> FleetWorkspace { try FleetWorkspace(opening: directory) }
}

/// `--root-key FILE`, repeatable.
struct FleetRootKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("root-key"),
        help: ArgumentHelp(
            "A root key file (repeat for the root's threshold; for a root rotation, the old root keys).",
            valueName: "file"))
    var rootKeys: [String] = []
}

/// How the fleet commands print.
enum FleetFormat {
    /// `root v3, timestamp v9, …` for the roles given.
    static func versions(_ versions: [FleetRole: Int]) -> String {
        versions.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) v\($0.value)" }.joined(separator: ", ")
    }

    /// A path relative to the current directory when under it.
    static func path(_ path: String) -> String {
        let current = FileManager.default.currentDirectoryPath + "/"
        return path.hasPrefix(current) ? String(path.dropFirst(current.count)) : path
    }

    /// The first 8 hex characters of a key id.
    static func keyID(_ id: String) -> String { String(id.prefix(8)) }
}
