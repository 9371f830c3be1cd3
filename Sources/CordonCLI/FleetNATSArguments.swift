import ArgumentParser

/// The NATS server and the workspace's identity on it (`ring`, `reports`).
struct FleetNATSArguments: ParsableArguments {
    @Option(name: .customLong("nats"), help: ArgumentHelp("A NATS server URL (repeatable).", valueName: "url"))
    var servers: [String] = []
    @Option(
        name: .customLong("nats-seed"),
        help: ArgumentHelp("The NKey seed file (default keys/push.nk).", valueName: "file"))
    var seedFile: String?
    @Option(
        name: .customLong("nats-ca"), help: ArgumentHelp("CA certificates of the NATS server (PEM).", valueName: "file")
    )
    var caFile: String?
}
