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
