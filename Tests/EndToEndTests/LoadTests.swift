import Foundation
import Testing

/// A thousand concurrent clients, most of them abusive (garbage, truncated and oversized
/// frames), the rest doing real round trips: the well-behaved ones never see an error. cordond
/// runs as an ordinary user outside test mode (``UserAgent``); the clients connect with that
/// user's credentials.
///
/// Runs alone (`make test` runs it in a second pass with `CORDON_LOAD_TESTS=1`): with over 1,024
/// descriptors open in the test process, Foundation's `Process.run()` in concurrent tests corrupts
/// memory (it uses `select`-sized descriptor sets), so no other test may spawn processes meanwhile.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["CORDON_LOAD_TESTS"] == "1"))
struct LoadTests {
    static let garbageClients = 900
    static let validClients = 100

    @Test func validClientsAreServedAmidGarbage() async throws {
        #expect(raiseOpenFileLimit(to: 8192) >= 2048, "1,000 clients need more descriptors")
        // This one test process plays all thousand clients: lift the per-process cap for it.
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            arguments: ["--max-connections-per-process", "2048"])
        defer { agent.cleanUp() }
        let kinds = (0..<Self.garbageClients).map { GarbageKind.allCases[$0 % GarbageKind.allCases.count] }
        // Every connection is open before any traffic: 1,000 at once.
        let sprays = try stride(from: 0, to: kinds.count, by: 100).map {
            try GarbageSpray(path: agent.socketPath, kinds: Array(kinds[$0..<min($0 + 100, kinds.count)]))
        }
        let valid = try ValidClients(count: Self.validClients, socket: agent.socketPath)
        let sprayed = DispatchGroup()
        for spray in sprays {
            sprayed.enter()
            Thread {
                spray.run(rounds: 3)
                sprayed.leave()
            }.start()
        }
        valid.start()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            sprayed.notify(queue: .global()) { done.resume() }
        }
        let report = await valid.finish(minimumRoundTrips: 20)
        for spray in sprays { spray.close() }

        var answers: [String: Int] = [:]
        for spray in sprays { answers.merge(spray.answers, uniquingKeysWith: +) }
        print(
            "load: \(Self.validClients) valid clients, \(report.roundTrips) round trips, worst \(report.worstMs) ms, "
                + "p99 \(report.p99Ms) ms; garbage answers: \(answers.sorted { $0.key < $1.key })")
        #expect(report.errors.isEmpty, "valid clients saw errors: \(report.errors.prefix(5))")
        #expect(sprays.flatMap(\.failures).isEmpty, "garbage clients could not connect: \(sprays[0].failures)")
        #expect(answers["io.cordon.Agent.MessageTooLarge", default: 0] > 0)
        #expect(answers["io.cordon.Agent.InvalidMessage", default: 0] > 0)
        #expect(agent.process.isRunning)
        #expect(try await agent.status()["state"] as? String == "uninitialized")
    }
}
