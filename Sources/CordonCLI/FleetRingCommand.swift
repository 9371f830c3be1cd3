import ArgumentParser
import CordonFleetAdmin

/// `cordon fleet ring DIR --nats URL`: the push channel's doorbell.
struct FleetRingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ring",
        abstract: "Ring the push channel's doorbell: connected machines poll within seconds.",
        discussion: """
            Publishes each machine's new signed commands (push/) to its subject, kept by JetStream \
            for machines offline now, then repository/timestamp.json (upload the repository first) on \
            cordon.fleet.doorbell: machines verify it and poll after a random delay of up to 10 s. \
            Nothing sent carries trust of its own. The workspace's NATS key is keys/push.nk \
            (`cordon fleet push-key`).
            """)

    @OptionGroup var workspace: FleetWorkspaceArgument
    @OptionGroup var nats: FleetNATSArguments

    func run() async throws {
        let rung = try FleetRing.ring(
            workspace: workspace.directory, servers: nats.servers, seedFile: nats.seedFile, caFile: nats.caFile)
        let commands = rung.commands.isEmpty ? "" : "; new commands for \(rung.commands.count) machine(s)"
        try Output.line("rang: timestamp v\(rung.version) on \(nats.servers.joined(separator: ", "))\(commands)")
    }
}

/// `cordon fleet push-key DIR`: the workspace's NATS identity.
struct FleetPushKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-key",
        abstract: "Make (once) the workspace's NATS key and print its NKey for the server's configuration.")

    @OptionGroup var workspace: FleetWorkspaceArgument

    func run() async throws {
        let (nkey, created) = try FleetRing.pushKey(workspace: workspace.directory)
        if created { Output.note("cordon: made \(FleetRing.keyPath(workspace: workspace.directory)) (0600)") }
        try Output.line(nkey)
    }
}
