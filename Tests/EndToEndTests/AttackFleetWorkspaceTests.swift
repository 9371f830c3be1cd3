import Foundation
import Testing

/// The admin's workspace keys are the admin's (docs/FLEET.md, "Push"; docs/THREAT-MODEL.md, "The
/// fleet repository and its commands"): an admin who is an ordinary user (`cordon-test`) makes a
/// workspace and its NATS key; another user of the machine (Python as `nobody`) can read neither
/// the NATS key (to ring, or to publish on every machine's subject) nor a signing key.
@Suite(.serialized) struct AttackFleetWorkspaceTests {
    static let attack = """
        out = {}
        for name, path in [("push.nk", sys.argv[1]), ("signing", sys.argv[2])]:
            try:
                open(path, "rb").read()
                out[name] = "read"
            except OSError as e:
                out[name] = e.strerror
        print(json.dumps(out))
        """

    @Test func anotherUserCannotReadTheWorkspacesKeys() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755, .ownerAccountID: Int(TestUser.uid)!, .groupOwnerAccountID: Int(TestUser.gid)!],
            ofItemAtPath: home.path)
        let fleet = home.appending("fleet")
        let asAdmin = URL(fileURLWithPath: TestUser.asUser[0])
        let prefix = Array(TestUser.asUser.dropFirst()) + [Binaries.cordon.path, "fleet"]
        let made = try await runCommand(asAdmin, prefix + ["init", fleet])
        #expect(made.status == 0, "\(made.stderr)")
        let key = try await runCommand(asAdmin, prefix + ["push-key", fleet])
        #expect(key.status == 0, "\(key.stderr)")
        #expect(key.stdout.hasPrefix("U"), "\(key.stdout)")
        let keys = fleet + "/keys"
        let attributes = try FileManager.default.attributesOfItem(atPath: keys + "/push.nk")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.ownerAccountID] as? Int).map(String.init) == TestUser.uid)

        let scripts = try TemporaryDirectory()
        defer { scripts.remove() }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scripts.path)
        let signing = try #require(
            try FileManager.default.contentsOfDirectory(atPath: keys).sorted().first { $0.hasSuffix(".key") })
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", UserAgent.python]
        let result = try await AttackScript.run(
            Self.attack, [keys + "/push.nk", keys + "/" + signing], in: scripts, command: nobody)
        for name in ["push.nk", "signing"] {
            #expect(result[name] as? String == "Permission denied", "\(name): \(result)")
        }
        // The admin can: ringing needs a server, but the key file opens and names the same NKey.
        let again = try await runCommand(asAdmin, prefix + ["push-key", fleet])
        #expect(again.status == 0 && again.stdout == key.stdout, "\(again.stderr)")
    }
}
