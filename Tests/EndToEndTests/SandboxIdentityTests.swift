import Foundation
import Testing

/// Apps bound by their Flatpak sandbox, and host bindings against processes in a namespace of
/// the user's making (docs/THREAT-MODEL.md, "Sandboxed apps"). The agent runs as an ordinary user
/// (65534); every attacker is a process of that same user with `bwrap` or `unshare`.
@Suite(.serialized) struct SandboxIdentityTests {
    static let flatpakPolicy = """
        {"schema": "cordon.policy.v1", "apps": {"managed": [
          {"id": "org.example.Notes", "executables": ["/app/bin/python3"], "flatpak": "org.example.Notes"}
        ]}, "conditions": {"preloadInjected": "block"}}
        """

    @Test func theRealSandboxGetsItsKeyAndForgedOnesDoNot() async throws {
        let agent = try await NobodyAgent.start(policy: Self.flatpakPolicy)
        defer { agent.cleanUp() }
        let info = agent.daemon.root.appending("flatpak-info")

        // The app, deployed by the system installation, in its sandbox.
        let real = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId, command: agent.sandbox(app: agent.deployment, info: info))
        #expect(real["managed"] as? Bool == true, "\(real)\n\(agent.daemon.log)")
        #expect(real["key"] is NSNull, "\(real)")

        // 1. A sandbox of the attacker's own: the same /.flatpak-info, its own copy of the program at /app.
        let forged = try await agent.userCopy(of: NobodyAgent.python, named: "forged/bin/python3")
        let forgedApp = ((forged as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let ownCode = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId, command: agent.sandbox(app: forgedApp, info: info))
        #expect(ownCode["managed"] as? Bool == false, "\(ownCode)")
        #expect(ownCode["key"] as? String == "io.cordon.App.NotManaged")
        #expect(agent.daemon.log.contains("its executable is not \(agent.deployment)/bin/python3"))

        // 2. The real app, but with a library of the attacker's mounted over the system's.
        let library = try await agent.userCopy(of: "/usr/lib/x86_64-linux-gnu/libm.so.6", named: "evil/libm.so.6")
        let swapped = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId,
            command: agent.sandbox(
                app: agent.deployment, info: info,
                extra: ["--ro-bind", library, "/usr/lib/x86_64-linux-gnu/libm.so.6"]))
        #expect(swapped["managed"] as? Bool == false, "\(swapped)")
        #expect(swapped["key"] as? String == "io.cordon.App.NotManaged")
        #expect(agent.daemon.log.contains("which is not a root-owned system file"))

        // 3. An installation of the user's own (as `flatpak --user` makes), named in /.flatpak-info.
        let userApp = try await agent.userCopy(
            of: NobodyAgent.python, named: "userinst/app/\(NobodyAgent.flatpakId)/x86_64/stable/1/files/bin/python3")
        let userDeployment = ((userApp as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let userInfo = agent.daemon.root.appending("user-flatpak-info")
        try NobodyAgent.writeInfo(appPath: userDeployment, to: userInfo)
        let userInstalled = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId, command: agent.sandbox(app: userDeployment, info: userInfo))
        #expect(userInstalled["managed"] as? Bool == false, "\(userInstalled)")
        #expect(agent.daemon.log.contains("is not in a system installation"))

        // 4. The real app with a preload list of the sandbox's making (the host's is empty): the
        // agent reads /etc/ld.so.preload as the process sees it.
        let preload = agent.daemon.root.appending("preload")
        try "/usr/lib/x86_64-linux-gnu/libz.so.1\n".write(toFile: preload, atomically: true, encoding: .utf8)
        let preloaded = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId,
            command: agent.sandbox(
                app: agent.deployment, info: info, extra: ["--ro-bind", preload, "/etc/ld.so.preload"]))
        #expect(preloaded["register"] as? String == "io.cordon.App.Refused", "\(preloaded)")
        #expect(agent.daemon.log.contains("/etc/ld.so.preload preloads libraries into every program"))

        // 5. The bound id claimed from outside any sandbox.
        let host = try await agent.registerAndGetKey(
            NobodyAgent.flatpakId, command: NobodyAgent.asUser + [NobodyAgent.python])
        #expect(host["managed"] as? Bool == false, "\(host)")
        #expect(agent.daemon.log.contains("it does not run in a Flatpak sandbox"))
        try await agent.daemon.stop()
    }

    @Test func aHostBindingDoesNotMatchInANamespaceTheUserMade() async throws {
        let agent = try await NobodyAgent.start(
            policy: """
                {"schema": "cordon.policy.v1", "apps": {"managed": [
                  {"id": "com.example.tool", "executables": ["\(NobodyAgent.python)"]}
                ]}}
                """)
        defer { agent.cleanUp() }
        let direct = try await agent.registerAndGetKey(
            "com.example.tool", command: NobodyAgent.asUser + [NobodyAgent.python])
        #expect(direct["managed"] as? Bool == true, "\(direct)\n\(agent.daemon.log)")
        #expect(direct["key"] is NSNull)

        // The bound executable, unchanged, but in a mount namespace where the attacker's library
        // stands in for the system's: nothing in the process's own files shows it.
        let library = try await agent.userCopy(of: "/usr/lib/x86_64-linux-gnu/libm.so.6", named: "evil/libm.so.6")
        let swap = "mount --bind \"$0\" /usr/lib/x86_64-linux-gnu/libm.so.6 && exec \"$@\""
        let attack = try await agent.registerAndGetKey(
            "com.example.tool",
            command: NobodyAgent.asUser + ["/usr/bin/unshare", "-Ur", "--mount", "/bin/sh", "-c", swap, library]
                + [NobodyAgent.python])
        #expect(attack["managed"] as? Bool == false, "\(attack)")
        #expect(attack["key"] as? String == "io.cordon.App.NotManaged")
        #expect(agent.daemon.log.contains("it runs in a user namespace its user made"))
        try await agent.daemon.stop()
    }
}
