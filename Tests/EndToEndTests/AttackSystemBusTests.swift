import CordonKit
import CordonProtocol
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Fingerprint unlock" and "Admin policy": the system services the agent
/// trusts are the system's. The system bus is an admin input (outside test mode only the system's
/// own, whatever `DBUS_SYSTEM_BUS_ADDRESS` says), and fprintd counts only when a connection of
/// root owns `net.reactivated.Fprint` on it. The impostor answers every scan with a match.
@Suite(.serialized) struct AttackSystemBusTests {
    static let passcode = "Cordon-2468-test"

    /// A directory for cordond as the user: admin policy allowing fingerprint unlock and an empty
    /// trust directory, both root's; the user's own directories under `user/`, theirs.
    func prepare() async throws -> TemporaryDirectory {
        let root = try TemporaryDirectory()
        for directory in ["admin", "trust", "user"] {
            try FileManager.default.createDirectory(
                atPath: root.appending(directory), withIntermediateDirectories: true)
        }
        try
            #"{"schema": "cordon.policy.v1", "passcode": {"biometrics": "allowed"}, "lock": {"discardKeyOnLock": true}}"#
            .write(toFile: root.appending("admin/biometrics.json"), atomically: true, encoding: .utf8)
        try await NobodyAgent.run(["/bin/chown", "\(NobodyAgent.uid):\(NobodyAgent.uid)", root.appending("user")])
        return root
    }

    /// cordond's arguments on `root`: no test mode, no admin value flag.
    func arguments(_ root: TemporaryDirectory) -> [String] {
        [
            "--runtime-dir", root.appending("user/run"), "--data-dir", root.appending("user/data"), "--config-dir",
            root.appending("user/config"), "--admin-policy-dir", root.appending("admin"), "--trust-dir",
            root.appending("trust"), "--log-target", "stderr", "--log-level", "debug",
        ]
    }

    /// The environment cordond starts with as the user: nothing of the test runner's.
    func environment(_ root: TemporaryDirectory, _ extra: [String: String]) -> [String: String] {
        let nowhere = "unix:path=" + root.appending("no-bus")
        return [
            "PATH": "/usr/bin:/bin", "HOME": root.appending("user"), "CORDON_SESSION_BUS_ADDRESS": nowhere,
        ].merging(extra) { $1 }
    }

    /// Runs cordond as the user outside test mode until it is stopped; `log` collects its output.
    func startAsUser(_ root: TemporaryDirectory, extra: [String: String], arguments more: [String] = []) throws
        -> Process
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: NobodyAgent.asUser[0])
        process.arguments = Array(NobodyAgent.asUser.dropFirst()) + [Binaries.cordond.path] + arguments(root) + more
        process.environment = environment(root, extra)
        _ = FileManager.default.createFile(atPath: root.appending("cordond.log"), contents: nil)
        let log = FileHandle(forWritingAtPath: root.appending("cordond.log"))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        return process
    }

    /// Initialises, unlocks, opts in to fingerprint unlock, logs out and asks a finger to unlock,
    /// all as the user: the fingerprint call's error and the state after it.
    func attack(_ socket: String, in root: TemporaryDirectory) async throws -> [String: Any] {
        try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            steps = {}
            steps["init"] = error(call(s, "io.cordon.Agent.Initialize", {"passcode": sys.argv[2]}))
            steps["unlock"] = error(call(s, "io.cordon.Agent.Unlock", {"passcode": sys.argv[2]}))
            steps["optIn"] = error(call(s, "io.cordon.Agent.SetBiometrics", {"enabled": True, "passcode": sys.argv[2]}))
            # A lock that discards the key keeps the copy for fingerprint unlock (a logout zeroes it).
            steps["lock"] = error(call(s, "io.cordon.Agent.Lock"))
            reply = call(s, "io.cordon.Agent.UnlockWithFingerprint")
            steps["finger"] = error(reply)
            steps["reason"] = reply.get("parameters", {}).get("reason", "")
            steps["state"] = call(s, "io.cordon.Agent.GetStatus")["parameters"]["status"]["state"]
            print(json.dumps(steps))
            """, [socket, Self.passcode], in: root, command: NobodyAgent.asUser + ["/usr/bin/python3"])
    }

    /// Waits until the agent at `socket` accepts the user's connection.
    func waitUntilReady(_ process: Process, socket: String, log: String) async throws {
        try await eventually("cordond answers the user") {
            guard process.isRunning else {
                throw DaemonError.exited((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            }
            let probe = try await runCommand(
                URL(fileURLWithPath: NobodyAgent.asUser[0]),
                Array(NobodyAgent.asUser.dropFirst()) + [
                    "/usr/bin/python3", "-c",
                    "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", socket,
                ])
            return probe.status == 0
        }
    }

    /// The attack of issue 26: everything as one ordinary uid, outside test mode, the root-owned
    /// admin policy allowing fingerprint unlock, `DBUS_SYSTEM_BUS_ADDRESS` naming the user's own
    /// bus with an fprintd that always matches. The agent never asks it: the bus is the system's.
    @Test func theUsersOwnBusInTheEnvironmentUnlocksNothing() async throws {
        let impostor = try await ImpostorBus(busUser: .nobody, impostorUser: .nobody)
        defer { impostor.cleanUp() }
        let root = try await prepare()
        defer { root.remove() }
        let process = try startAsUser(root, extra: ["DBUS_SYSTEM_BUS_ADDRESS": impostor.address])
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let socket = root.appending("user/run/agent.sock")
        try await waitUntilReady(process, socket: socket, log: root.appending("cordond.log"))
        let steps = try await attack(socket, in: root)
        for step in ["init", "unlock", "optIn", "lock"] { #expect(steps[step] is NSNull, "\(step): \(steps)") }
        #expect(steps["finger"] as? String == "io.cordon.Agent.BiometricsUnavailable", "\(steps)")
        #expect(steps["state"] as? String == "lockedNoKey", "\(steps)")
        #expect(impostor.calls.isEmpty, "the impostor was asked: \(impostor.calls)")
        let log = try String(contentsOfFile: root.appending("cordond.log"), encoding: .utf8)
        #expect(log.contains("DBUS_SYSTEM_BUS_ADDRESS is ignored outside test mode"))
        #expect(!log.contains("unlocked with a fingerprint"))
    }

    /// The bus named by `CORDON_SYSTEM_BUS_ADDRESS` or `--system-bus-address` is an admin input:
    /// outside test mode cordond refuses to start on the user's bus, and says why.
    @Test func theUsersOwnBusByFlagOrVariableIsRefusedAtStart() async throws {
        let impostor = try await ImpostorBus(busUser: .nobody, impostorUser: .nobody)
        defer { impostor.cleanUp() }
        let root = try await prepare()
        defer { root.remove() }
        for (name, arguments, extra) in [
            ("CORDON_SYSTEM_BUS_ADDRESS", [], ["CORDON_SYSTEM_BUS_ADDRESS": impostor.address]),
            ("--system-bus-address", ["--system-bus-address", impostor.address], [:]),
        ] {
            let result = try await runCommand(
                URL(fileURLWithPath: NobodyAgent.asUser[0]),
                Array(NobodyAgent.asUser.dropFirst()) + [Binaries.cordond.path] + self.arguments(root) + arguments,
                environment: environment(root, extra))
            #expect(result.status == 2, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("refusing to start: \(name) set what an administrator decides"))
            #expect(result.stderr.contains("hint:"))
        }
        #expect(impostor.calls.isEmpty)
    }

    /// On a bus whose owner of `net.reactivated.Fprint` is not root, the agent refuses with a typed
    /// error and asks nothing; owned by root, it is asked. cordond and its clients run as the user,
    /// in test mode: only test mode takes a private system bus.
    @Test(arguments: [ImpostorBus.User.nobody, .root])
    func onlyAFprintdOwnedByRootIsAsked(owner: ImpostorBus.User) async throws {
        let bus = try await ImpostorBus(busUser: .root, impostorUser: owner)
        defer { bus.cleanUp() }
        let agent = try await UserAgent(
            policy:
                #"{"schema": "cordon.policy.v1", "passcode": {"biometrics": "allowed"}, "lock": {"discardKeyOnLock": true}}"#,
            testMode: true,
            environment: ["CORDON_SYSTEM_BUS_ADDRESS": bus.address])
        defer { agent.cleanUp() }
        let on = try await agent.cli(["biometrics", "on", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(on.status == 0, "\(on.stderr)")
        // A lock that discards the key keeps the copy for fingerprint unlock (a logout zeroes it).
        #expect(try await agent.cli(["lock"]).status == 0)
        let failedBefore = try await agent.status()["failedAttempts"] as? Int
        let unlock = try await agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Agent.UnlockWithFingerprint")
            print(json.dumps({"error": error(reply), "parameters": reply.get("parameters", {})}))
            """)
        switch owner {
        case .nobody:
            #expect(unlock["error"] as? String == "io.cordon.Agent.BiometricsUnavailable", "\(unlock)")
            #expect(
                (unlock["parameters"] as? [String: Any])?["reason"] as? String
                    == "net.reactivated.Fprint is owned by uid 65534, not root: not the system's fprintd", "\(unlock)")
            let status = try await agent.status()
            #expect(status["state"] as? String == "lockedNoKey")
            #expect(status["failedAttempts"] as? Int == failedBefore)
            #expect(bus.calls.isEmpty, "the impostor was asked: \(bus.calls)")
            #expect(agent.log.contains("fingerprint unlock refused: net.reactivated.Fprint is owned by uid 65534"))
        case .root:
            #expect(unlock["error"] is NSNull, "\(unlock)")
            #expect(try await agent.status()["state"] as? String == "unlocked")
            #expect(bus.calls.contains("VerifyStart"))
        }
    }

    /// A logind of someone else's making speaks for nothing: when a connection that is not root's
    /// owns `org.freedesktop.login1`, the agent watches no signal of it and takes no inhibitor
    /// from it, and logs why; owned by root, its `PrepareForSleep` locks. cordond and its clients
    /// run as the user, in test mode: only test mode takes a private system bus.
    @Test(arguments: [ImpostorBus.User.nobody, .root])
    func onlyALogindOwnedByRootIsHeard(owner: ImpostorBus.User) async throws {
        let bus = try await ImpostorBus(.logind, busUser: .root, impostorUser: owner)
        defer { bus.cleanUp() }
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, arguments: ["--system-bus-address", bus.address],
            testMode: true, environment: ["XDG_SESSION_ID": ""])
        defer { agent.cleanUp() }
        try await bus.emit()
        switch owner {
        case .nobody:
            try await eventually("the agent turns the impostor down") {
                agent.log.contains("org.freedesktop.login1 is owned by a connection that is not root's")
            }
            let status = try await agent.status()
            let triggers = status["lockTriggers"] as? [String] ?? []
            #expect(!triggers.contains("logind.PrepareForSleep"), "\(status)")
            #expect(status["state"] as? String == "unlocked")
            #expect(!bus.calls.contains("Inhibit"), "the impostor was asked: \(bus.calls)")
        case .root:
            try await eventually("PrepareForSleep locks") { try await agent.status()["state"] as? String != "unlocked" }
            #expect(bus.calls.contains("Inhibit"))
        }
    }
}
