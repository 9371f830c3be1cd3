import ArgumentParser
import CordonFleetAdmin

/// `cordon fleet publish DIR --policies POLICYDIR`.
struct FleetPublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a directory's policy files (*.json and *.json.sig) as the fleet's policies.",
        discussion: """
            The files are published exactly as given (sign them first with `cordon policy sign`); \
            files no longer in the directory are removed from the fleet. Targets, snapshot and \
            timestamp get new versions; upload the repository afterwards.
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument

    @Option(help: ArgumentHelp("The directory of policy files.", valueName: "dir"))
    var policies: String

    func run() async throws {
        var fleet = try workspace.open()
        let result = try fleet.publish(policies: policies)
        guard result.published else {
            try Output.line("nothing changed: the fleet already has these \(policies) files")
            return
        }
        for path in result.added { try Output.line("added    \(path)") }
        for path in result.changed { try Output.line("changed  \(path)") }
        for path in result.removed { try Output.line("removed  \(path)") }
        for name in result.unsigned {
            Output.note("cordon: warning: \(name) has no \(name).sig: machines that trust admin keys refuse it")
        }
        try Output.line(
            "published \(FleetFormat.versions(result.versions)); upload \(FleetFormat.path(fleet.repository))/")
    }
}
