import ArgumentParser
import CordonFleet
import Foundation

/// nats-server (Debian's) for the fleet swarm: JetStream on a file store, the admin's NKey allowed
/// everything, each simulated machine only its own subjects (docs/FLEET.md, "Push"); stopped and
/// started again on the same port and store for the restart measure.
final class FleetBenchNATS: @unchecked Sendable {
    let url: String
    let directory: String
    let port: Int
    private var process: Process?

    /// `machines` are (device id, NKey) pairs.
    init(directory: String, admin: String, machines: [(id: String, nkey: String)]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nats-server") else {
            throw ValidationError("fleet needs nats-server (apt-get install nats-server)")
        }
        self.directory = directory + "/nats"
        try FileManager.default.createDirectory(atPath: self.directory + "/store", withIntermediateDirectories: true)
        port = try FleetBenchNginx.freePort()
        url = "nats://127.0.0.1:\(port)"
        var users = [
            #"{ nkey: \#(admin), permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } } }"#
        ]
        for machine in machines {
            let commands = FleetPushedCommands.subject(for: machine.id)
            users.append(
                """
                { nkey: \(machine.nkey), permissions: { publish: { allow: ["$JS.API.DIRECT.GET.\(FleetPushedCommands.stream).\(commands)", \
                "\(FleetPushedCommands.reportSubject(for: machine.id))"] }, subscribe: { allow: ["\(FleetDoorbell.subject)", \
                "\(commands)", "_INBOX.\(machine.id).>"] } } }
                """)
        }
        let configuration = """
            listen: 127.0.0.1:\(port)
            max_connections: 200000
            jetstream { store_dir: "\(self.directory)/store", max_memory_store: 256MB, max_file_store: 4GB }
            authorization { users = [
            \(users.joined(separator: "\n"))
            ] }
            """
        try configuration.write(toFile: self.directory + "/nats.conf", atomically: true, encoding: .utf8)
        try start()
    }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nats-server")
        process.arguments = ["-c", directory + "/nats.conf", "-l", directory + "/nats.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        for _ in 0..<400 {
            if let log = try? String(contentsOfFile: directory + "/nats.log", encoding: .utf8),
                log.components(separatedBy: "Server is ready").count > starts
            {
                starts += 1
                return
            }
            guard process.isRunning else { break }
            usleep(25_000)
        }
        throw ValidationError("nats-server did not start: \(directory)/nats.log")
    }

    private var starts = 0

    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Stops the server (SIGTERM: JetStream's store is flushed) and waits for it.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    func residentBytes() -> Int { ((try? ProcessMemory.read(pid: pid))?.rssKiB ?? 0) * 1024 }
    func cpuNanoseconds() -> UInt64 { ProcessCPU.nanoseconds(pid: pid) }
}
