import ArgumentParser
import CordonFleet
import CordonFleetd
import CordonSystem
import Foundation
import Logging
import Metrics
import Prometheus

/// `cordon-fleetd`: the machine's link to its admins' signed repository (docs/FLEET.md).
struct CordonFleetdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cordon-fleetd",
        abstract:
            "Fetch and verify the admins' signed repository; install its policies; hand its commands to the agents.",
        subcommands: [Run.self, ID.self], defaultSubcommand: Run.self)

    struct Locations: ParsableArguments {
        @Option(help: "fleetd's state directory (device key, trusted metadata, audit log).")
        var stateDir = "/var/lib/cordon-fleetd"
        @Option(help: "The TPM to seal the device key to (default: /dev/tpmrm0 when present).")
        var tpmTcti: String?
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Poll the repository (the service's command).")

        @OptionGroup var locations: Locations
        @Option(help: "The fleet settings.") var config = "/etc/cordon/fleet.json"
        @Option(help: "Where the agents read commands and status.") var fleetDir = "/var/lib/cordon/fleet"
        @Option(help: "The admin policy directory to install policies into.") var policyDir = "/etc/cordon/policy.d"
        @Flag(help: "Poll once, print the outcome and exit (0 verified, 1 failed).") var once = false

        func run() async throws {
            let logger = makeLogger()
            do {
                let configuration = try FleetdConfiguration.load(config)
                try prepare(locations.stateDir)
                let key = try FleetDeviceKey.openOrCreate(in: locations.stateDir, tcti: locations.tpmTcti)
                let paths = FleetdPaths(
                    stateDirectory: locations.stateDir, fleetDirectory: fleetDir, policyDirectory: policyDir)
                let poller = try FleetPoller(configuration: configuration, paths: paths, key: key, logger: logger)
                logger.info("starting", metadata: ["device": "\(key.id)", "repository": "\(configuration.repository)"])
                if once {
                    let result = await poller.poll()
                    await poller.shutdown()
                    switch result {
                    case .verified(let changed, _): print(changed ? "verified: updated" : "verified: unchanged")
                    case .failed(let message):
                        print("failed: \(message)")
                        throw ExitCode(1)
                    }
                    return
                }
                // One registry for the process: fleetd's metrics, and any a library records through
                // swift-metrics.
                MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: poller.metrics.registry))
                try await FleetDaemon(
                    poller: poller, interval: configuration.intervalSeconds, logger: logger, push: configuration.push,
                    key: key, metrics: configuration.metrics
                ).run()
            } catch let error as FleetdError {
                FileHandle.standardError.write(Data("cordon-fleetd: \(error.message)\nhint: \(error.hint)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct ID: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print this machine's device id (SHA-256 of its device key), making the key if needed.")

        @OptionGroup var locations: Locations
        @Flag(help: "Also print the public key and where the private key is kept.") var verbose = false

        func run() async throws {
            do {
                try prepare(locations.stateDir)
                let key = try FleetDeviceKey.openOrCreate(in: locations.stateDir, tcti: locations.tpmTcti)
                print(key.id)
                if verbose {
                    print("public key: \(TUFHex.encode(key.publicKey))")
                    print("NATS user (nkey): \(FleetPush.nkey(of: key))")
                    print(
                        "kept: \(key.protection == .tpm ? "sealed to the TPM" : "in \(locations.stateDir)/device-key (no TPM)")"
                    )
                }
            } catch {
                FileHandle.standardError.write(Data("cordon-fleetd: \(error.message)\nhint: \(error.hint)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}

private func prepare(_ stateDirectory: String) throws(FleetdError) {
    try AtomicFile.makeDirectory(stateDirectory, mode: 0o700)
}

private func makeLogger() -> Logger {
    let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    return Logger(label: "cordon-fleetd") { label in
        journal ? JournaldLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
    }
}
