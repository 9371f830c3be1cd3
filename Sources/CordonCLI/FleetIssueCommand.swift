import ArgumentParser
import CordonFleet
import CordonFleetAdmin
import Foundation

/// `cordon fleet command DIR --device ID (--lock|--wipe-app APP|--wipe|--refresh)`.
struct FleetIssueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "command",
        abstract: "Send a signed command (lock, wipe one app, wipe, refresh) to one or more machines.",
        discussion: """
            Each machine's commands are numbered 1, 2, 3 … (fleet.json keeps the counters) and taken \
            once. A wipe or wipe-app of more than one machine needs as many distinct command keys as \
            the root's wipe threshold: give the other admins' keys with --command-key FILE.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("A device id, 64 hex characters (`cordon-fleetd id`); repeatable.", valueName: "id"))
    var device: [String] = []

    @Option(help: ArgumentHelp("A file of device ids, one per line.", valueName: "file"))
    var devices: String?

    @Flag(help: "Lock every container on the machines.")
    var lock = false

    @Option(help: ArgumentHelp("Erase one app's key and records.", valueName: "app"))
    var wipeApp: String?

    @Flag(help: "Erase every container on the machines.")
    var wipe = false

    @Flag(help: "Make the machines fetch the repository now.")
    var refresh = false

    @Option(help: ArgumentHelp("How long the command may still be taken (default 7d).", valueName: "duration"))
    var expiresIn = "7d"

    @Option(help: ArgumentHelp("Why, for the machines' audit logs.", valueName: "text"))
    var reason: String?

    @Option(help: ArgumentHelp("Another command key file (another admin's); repeatable.", valueName: "file"))
    var commandKey: [String] = []

    func run() async throws {
        let kinds: [FleetCommand.Kind] =
            (lock ? [.lock] : []) + (wipeApp != nil ? [.wipeApp] : []) + (wipe ? [.wipe] : [])
            + (refresh ? [.refresh] : [])
        guard kinds.count == 1, let kind = kinds.first else {
            throw CLIError(
                "give exactly one of --lock, --wipe-app APP, --wipe, --refresh", hint: "e.g. --lock", code: .usage)
        }
        guard let seconds = FleetDuration.parse(expiresIn) else {
            throw CLIError("--expires-in \"\(expiresIn)\" is not a duration", hint: "e.g. 1h, 7d", code: .usage)
        }
        var ids = device
        if let devices { ids += try FleetCommandRequest.deviceIDs(file: devices) }
        guard !ids.isEmpty else {
            throw CLIError("no device given", hint: "give --device ID (repeatable) or --devices FILE", code: .usage)
        }
        var fleet = try workspace.open()
        let request = FleetCommandRequest(
            kind: kind, app: wipeApp, devices: ids, expiresIn: seconds, reason: reason)
        let result = try fleet.issue(request, commandKeys: commandKey)
        let what = kind == .wipeApp ? "wipeApp \(wipeApp ?? "")" : kind.rawValue
        for (device, counter) in result.counters {
            try Output.line("\(what) → \(device) (counter \(counter))")
        }
        try Output.line(
            "expires \(TUFDate.format(result.expires)); signed by \(result.signers.count) command key(s) "
                + "(\(result.signers.map(FleetFormat.keyID).joined(separator: ", ")))")
        try Output.line(
            "published \(FleetFormat.versions(result.versions)); upload \(FleetFormat.path(fleet.repository))/")
    }
}
