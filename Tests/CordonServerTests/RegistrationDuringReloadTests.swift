import CordonKit
import CordonProtocol
import Crypto
import Foundation
import Testing

/// Registrations racing policy reloads. A registration reads `/proc` and hashes the executable
/// on the store pool's thread while the loop may apply a new policy; what the pool needs of the
/// policy is copied on the loop first (it once read the policy there: a data race, now refused
/// by the compiler since the agent is not `Sendable`). Every registration is judged by one
/// whole policy; `make test-tsan` runs this under ThreadSanitizer too.
@Suite struct RegistrationDuringReloadTests {
    static let appId = "com.example.bound"

    /// A policy binding this test process's own executable by path and digest; `maxChars`
    /// changes the version so every reload applies.
    static func policy(version: Int, executable: String, digest: String) -> String {
        #"""
        {"schema": "cordon.policy.v1",
         "apps": {"managed": [{"id": "\#(appId)", "executables": ["\#(executable)"], "sha256": ["\#(digest)"]}],
                  "unknown": "refuse"},
         "pasteboard": {"maxChars": \#(1000 + version)}}
        """#
    }

    /// Connects as the app; `close()` returns before the agent has seen the hang-up, so under load
    /// the previous registration may still hold the id for a moment (`AppIdInUse`): try again.
    static func connect(_ socket: String) async throws -> CordonApp {
        for _ in 0..<500 {
            do {
                return try await CordonApp.connect(appId: appId, socketPath: socket)
            } catch CordonError.appIdInUse {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        return try await CordonApp.connect(appId: appId, socketPath: socket)
    }

    @Test func everyRegistrationIsJudgedByOneWholePolicy() async throws {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: executable))
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        try await withTestAgent(policies: true) { agent in
            let admin = agent.directory + "/admin"
            try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
            let file = admin + "/10-bind.json"
            try Self.policy(version: 0, executable: executable, digest: digest)
                .write(toFile: file, atomically: true, encoding: .utf8)
            let client = try await agent.client()
            _ = try await client.reloadPolicy()
            let socket = agent.socketPath
            let managed = try await withThrowingTaskGroup(of: [Bool].self) { group in
                group.addTask {
                    for version in 1...20 {
                        try Self.policy(version: version, executable: executable, digest: digest)
                            .write(toFile: file, atomically: true, encoding: .utf8)
                        _ = try await client.reloadPolicy()
                    }
                    return []
                }
                group.addTask {
                    var outcomes: [Bool] = []
                    for _ in 0..<20 {
                        let app = try await Self.connect(socket)
                        outcomes.append(app.managed)
                        await app.close()
                    }
                    return outcomes
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(managed.count == 20)
            #expect(managed.allSatisfy { $0 }, "the bound executable with its digest is managed under every version")
            await client.close()
        }
    }
}
