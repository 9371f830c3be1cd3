import CordonSystem
import Foundation
import Testing

/// The shipped user units: `cordon setup --user` writes them for a real binary, and
/// `systemd-analyze --user verify` accepts them without a single warning.
@Suite struct SystemdUnitTests {
    static let analyze = "/usr/bin/systemd-analyze"
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    @Test func shippedUnitsAreTheGeneratedOnes() throws {
        let directory = Self.repository.appendingPathComponent("systemd")
        let socket = try String(contentsOf: directory.appendingPathComponent("cordond.socket"), encoding: .utf8)
        let service = try String(contentsOf: directory.appendingPathComponent("cordond.service"), encoding: .utf8)
        #expect(socket == SystemdUnits.socket)
        #expect(service == SystemdUnits.service())
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: analyze), "needs systemd-analyze"))
    func setupWritesUnitsThatVerify() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let home = root.appending("home")
        let units = root.appending("units")
        let setup = try await runCommand(
            Binaries.cordon, ["setup", "--user", "--unit-dir", units, "--cordond-path", Binaries.cordond.path],
            environment: ["HOME": home])
        #expect(setup.status == 0, "\(setup.stderr)")
        #expect(setup.stdout.contains("systemctl --user enable --now cordond.socket"))
        for directory in SystemdUnits.writableDirectories(home: home) {
            #expect(FileManager.default.fileExists(atPath: directory), "\(directory) exists for ReadWritePaths")
        }
        let service = try String(contentsOfFile: units + "/cordond.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(Binaries.cordond.path)\n"))
        #expect(service.contains("Type=notify"))

        // --user verify needs a runtime directory but no running user manager.
        let runtime = root.appending("xdg-runtime")
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let verify = try await runCommand(
            URL(fileURLWithPath: Self.analyze),
            ["--user", "verify", units + "/cordond.socket", units + "/cordond.service"],
            environment: ["XDG_RUNTIME_DIR": runtime, "HOME": home])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.isEmpty, "no warnings: \(verify.stderr)")
    }

    /// The system unit the Debian package installs for cordon-fleetd (`scripts/make-deb.sh`):
    /// `systemd-analyze verify` accepts it without a warning, run for the built binary (the
    /// shipped `ExecStart` names /usr/bin, where the package puts it; scripts/test-deb.sh verifies
    /// the installed unit there, man page included).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: analyze), "needs systemd-analyze"))
    func fleetdSystemUnitVerifies() async throws {
        let shipped = try String(
            contentsOf: Self.repository.appendingPathComponent("systemd/cordon-fleetd.service"), encoding: .utf8)
        #expect(shipped.contains("ExecStart=/usr/bin/cordon-fleetd run\n"))
        #expect(shipped.contains("Type=notify\n"))
        #expect(shipped.contains("ConditionPathExists=/etc/cordon/fleet.json\n"))
        #expect(shipped.contains("CapabilityBoundingSet=\n"))
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let unit = root.appending("cordon-fleetd.service")
        let built = "ExecStart=\(Binaries.fleetd.path) "
        try shipped.replacingOccurrences(of: "ExecStart=/usr/bin/cordon-fleetd ", with: built)
            .write(toFile: unit, atomically: true, encoding: .utf8)
        // --man=no: the Documentation= man page is installed by the package, not here.
        let verify = try await runCommand(URL(fileURLWithPath: Self.analyze), ["verify", "--man=no", unit])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.isEmpty, "no warnings: \(verify.stderr)")
    }

    @Test func setupRefusesAMissingBinary() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let result = try await runCommand(
            Binaries.cordon,
            ["setup", "--user", "--unit-dir", root.appending("units"), "--cordond-path", root.appending("none")],
            environment: ["HOME": root.appending("home")])
        #expect(result.status != 0)
        #expect(!FileManager.default.fileExists(atPath: root.appending("units/cordond.service")))
    }
}
