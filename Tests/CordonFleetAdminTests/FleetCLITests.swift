import CordonFleet
import CordonFleetAdmin
import Foundation
import Testing

/// The built `cordon` binary's `fleet` commands, end to end, as an admin runs them.
@Suite struct FleetCLITests {
    /// The built `cordon`: `CORDON_BIN_DIR`, else next to the test bundle, else .build/debug.
    static let cordon: String = {
        if let override = ProcessInfo.processInfo.environment["CORDON_BIN_DIR"] { return override + "/cordon" }
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("cordon").path) {
                return candidate.appendingPathComponent("cordon").path
            }
            candidate = candidate.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/cordon").path
    }()

    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    func run(_ arguments: [String], in directory: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.cordon)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    @Test func initPublishCommandStatus() throws {
        let directory = try FleetTest.temporaryDirectory("cli") + "/fleet"
        let device = FleetTest.device("laptop-7")

        let made = try run(["fleet", "init", directory])
        #expect(made.status == 0, "\(made.errors)")
        #expect(made.output.contains("created the fleet workspace"))
        #expect(made.output.contains("/keys/root-"))
        #expect(made.output.contains("offline"))

        let policies = try FleetTest.policyDirectory(["10-base.json": "{}", "10-base.json.sig": "sig"])
        let published = try run(["fleet", "publish", directory, "--policies", policies])
        #expect(published.status == 0, "\(published.errors)")
        #expect(published.output.contains("added    policies/10-base.json"))
        #expect(published.output.contains("targets v2"))

        let issued = try run([
            "fleet", "command", directory, "--device", device, "--wipe-app", "com.example.mail", "--reason", "stolen",
        ])
        #expect(issued.status == 0, "\(issued.errors)")
        #expect(issued.output.contains("wipeApp com.example.mail → \(device) (counter 1)"))

        let status = try run(["fleet", "status", directory])
        #expect(status.status == 0, "\(status.errors)")
        #expect(status.output.contains("commands   v2"))
        #expect(status.output.contains("policies: policies/10-base.json policies/10-base.json.sig"))
        #expect(status.output.contains(device))
        #expect(status.output.contains("counter 1"))

        let timestamp = try run(["fleet", "timestamp", directory])
        #expect(timestamp.status == 0, "\(timestamp.errors)")
        #expect(timestamp.output.hasPrefix("timestamp v4, expires "))

        // What the CLI made is what a device accepts.
        var swift = SwiftClient(root: try FleetTest.bytes("\(directory)/repository/1.root.json"))
        let got = try swift.update("\(directory)/repository", paths: ["commands/\(device).json"]).get()
        #expect(try FleetCommandFile(#require(got.files["commands/\(device).json"])).commands.first?.reason == "stolen")

        // Errors: the message, a hint, and the exit code.
        let badDevice = try run(["fleet", "command", directory, "--device", "laptop-7", "--lock"])
        #expect(badDevice.status == 2)
        #expect(badDevice.errors.contains("cordon: error: --device \"laptop-7\" is not a device id"))
        #expect(badDevice.errors.contains("hint: "))
        let wipe = try run([
            "fleet", "command", directory, "--device", device, "--device", FleetTest.device("b"), "--wipe",
        ])
        #expect(wipe.status == 1)
        #expect(wipe.errors.contains("needs 2 distinct command keys"))
        // A second admin's key, written to a relative path, makes the wipe of two machines possible.
        let admin2 = try FleetTest.temporaryDirectory("admin2")
        let added = try run(["fleet", "add-key", directory, "--role", "commands", "--out", "bob.key"], in: admin2)
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output.contains("new commands key: bob.key"))
        let wipe2 = try run(
            [
                "fleet", "command", directory, "--device", device, "--device", FleetTest.device("b"), "--wipe",
                "--command-key", "bob.key",
            ], in: admin2)
        #expect(wipe2.status == 0, "\(wipe2.errors)")
        #expect(wipe2.output.contains("signed by 2 command key(s)"))
        let noWorkspace = try run(["fleet", "status", directory + "/nope"])
        #expect(noWorkspace.status == 1)
        #expect(noWorkspace.errors.contains("is not a fleet workspace"))
    }
}
