import Foundation
import Testing

/// fleetd's state is root's (docs/FLEET.md, "Files"): the machine's user — an ordinary program of
/// theirs, here Python run as `cordon-test` — cannot read the device key (and so cannot sign a
/// report, or connect to NATS, as the machine), nor the trusted state or the audit log, nor change
/// or list them; `cordon-fleetd id` run as the user fails naming the state directory.
@Suite(.serialized) struct AttackFleetdStateTests {
    static let attack = """
        state = sys.argv[1]
        out = {}
        for name in ["device-key", "state.json", "audit.log"]:
            try:
                open(os.path.join(state, name), "rb").read()
                out[name] = "read"
            except OSError as e:
                out[name] = e.strerror
        try:
            open(os.path.join(state, "state.json"), "ab").close()
            out["append"] = "written"
        except OSError as e:
            out["append"] = e.strerror
        try:
            os.listdir(state)
            out["list"] = "listed"
        except OSError as e:
            out["list"] = e.strerror
        print(json.dumps(out))
        """

    @Test func theMachinesUserCannotReadOrChangeFleetdsState() async throws {
        try await FleetdEndToEndTests.withFleet { _, _, fleetd in
            let poll = try await fleetd.pollOnce()
            #expect(poll.status == 0, "\(poll.stdout)")
            let scripts = try TemporaryDirectory()
            defer { scripts.remove() }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scripts.path)
            let result = try await AttackScript.run(
                Self.attack, [fleetd.stateDirectory], in: scripts, command: TestUser.asUser + [UserAgent.python])
            for name in ["device-key", "state.json", "audit.log", "append", "list"] {
                #expect(result[name] as? String == "Permission denied", "\(name): \(result)")
            }
            let id = try await runCommand(
                URL(fileURLWithPath: TestUser.asUser[0]),
                Array(TestUser.asUser.dropFirst()) + [Binaries.fleetd.path, "id", "--state-dir", fleetd.stateDirectory])
            #expect(id.status != 0)
            #expect(id.stderr.contains(fleetd.stateDirectory), "\(id.stderr)")
        }
    }
}
