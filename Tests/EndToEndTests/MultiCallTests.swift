import Foundation
import Testing

/// The multi-call executable `make install` and the Debian package install as `cordon`, with
/// `cordond` and `cordon-fleetd` as symbolic links to it (Sources/cordon-multicall): under each
/// name it is that program.
@Suite struct MultiCallTests {
    /// The built multi-call executable linked under `names` in a fresh directory.
    static func linked(_ names: [String]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for name in names {
            try FileManager.default.createSymbolicLink(
                atPath: directory.appending(name), withDestinationPath: Binaries.multicall.path)
        }
        return directory
    }

    /// `--help`'s usage line names the program each name runs (ArgumentParser prints its command name).
    @Test(arguments: ["cordon", "cordond", "cordon-fleetd"])
    func helpUnderEachName(_ name: String) async throws {
        let directory = try Self.linked([name])
        defer { directory.remove() }
        let result = try await runCommand(URL(fileURLWithPath: directory.appending(name)), ["--help"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("OVERVIEW: "), "\(result.stdout)")
        #expect(result.stdout.contains("\nUSAGE: \(name) "), "\(result.stdout)")
        // Its own subcommands: cordon's `status`, fleetd's `id`; cordond has none.
        #expect(result.stdout.contains("\n  status ") == (name == "cordon"), "\(result.stdout)")
        #expect(result.stdout.contains("\n  id ") == (name == "cordon-fleetd"), "\(result.stdout)")
    }

    /// The same help as the program's own executable prints (the tests' binaries, Binaries).
    @Test func sameHelpAsTheProgramsOwnExecutables() async throws {
        let directory = try Self.linked(["cordon", "cordond", "cordon-fleetd"])
        defer { directory.remove() }
        for (name, own) in [
            ("cordon", Binaries.cordon), ("cordond", Binaries.cordond), ("cordon-fleetd", Binaries.fleetd),
        ] {
            let linked = try await runCommand(URL(fileURLWithPath: directory.appending(name)), ["--help"])
            let single = try await runCommand(own, ["--help"])
            #expect(linked.stdout == single.stdout, "\(name)")
        }
    }

    /// Under its build name the first argument names the program; `cordon`'s own arguments are
    /// never read as one (`cordon cordond` is an unexpected argument: the usage exit code, 2).
    @Test func programNamedByTheFirstArgumentOnlyUnderItsBuildName() async throws {
        let daemon = try await runCommand(Binaries.multicall, ["cordond", "--help"])
        #expect(daemon.status == 0)
        #expect(daemon.stdout.contains("\nUSAGE: cordond "), "\(daemon.stdout)")
        let plain = try await runCommand(Binaries.multicall, ["--help"])
        #expect(plain.stdout.contains("\nUSAGE: cordon "), "\(plain.stdout)")

        let directory = try Self.linked(["cordon"])
        defer { directory.remove() }
        let cordon = try await runCommand(URL(fileURLWithPath: directory.appending("cordon")), ["cordond"])
        #expect(cordon.status == 2, "\(cordon.stdout)\(cordon.stderr)")
        #expect(cordon.stderr.contains("cordon: error:"), "\(cordon.stderr)")
        #expect(!cordon.stdout.contains("USAGE: cordond"), "\(cordon.stdout)")
    }

    /// `cordon-fleetd id` makes the device key in its state directory and prints its id.
    @Test func fleetdPrintsItsDeviceID() async throws {
        let directory = try Self.linked(["cordon-fleetd"])
        defer { directory.remove() }
        let state = directory.appending("state")
        let fleetd = URL(fileURLWithPath: directory.appending("cordon-fleetd"))
        let first = try await runCommand(fleetd, ["id", "--state-dir", state])
        #expect(first.status == 0, "\(first.stderr)")
        let id = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 64 && id.allSatisfy(\.isHexDigit), "\(id)")
        let second = try await runCommand(fleetd, ["id", "--state-dir", state])
        #expect(second.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == id)
    }

    /// One file as both ends: `cordond` serves its socket and `cordon status` reads it.
    @Test func cordondServesCordon() async throws {
        let directory = try Self.linked(["cordon", "cordond"])
        defer { directory.remove() }
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: directory.appending("cordond"))
        daemon.arguments = [
            "--runtime-dir", directory.appending("run"), "--data-dir", directory.appending("data"),
            "--config-dir", directory.appending("config"), "--admin-policy-dir", directory.appending("admin"),
            "--trust-dir", directory.appending("trust"), "--idle-timeout", "0", "--test-mode", "--insecure-fast-kdf",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        let nowhere = "unix:path=" + directory.appending("no-bus")
        environment["CORDON_SYSTEM_BUS_ADDRESS"] = nowhere
        environment["CORDON_SESSION_BUS_ADDRESS"] = nowhere
        daemon.environment = environment
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try FileManager.default.createDirectory(atPath: directory.appending("admin"), withIntermediateDirectories: true)
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let socket = directory.appending("run/agent.sock")
        try await eventually("cordond's socket") { FileManager.default.fileExists(atPath: socket) }
        let cordon = URL(fileURLWithPath: directory.appending("cordon"))
        var status = CommandResult(status: -1, stdout: "", stderr: "")
        try await eventually("cordon status answered") {
            status = try await runCommand(cordon, ["--socket", socket, "status", "--json"])
            return status.status == 0
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(json["state"] as? String == "uninitialized", "\(status.stdout)")
        // The agent runs as `cordond`: its name in /proc, as systemd and ps show it.
        let comm = try String(contentsOfFile: "/proc/\(daemon.processIdentifier)/comm", encoding: .utf8)
        #expect(comm.trimmingCharacters(in: .newlines) == "cordond")
    }
}
