import CordonKit
import CordonProtocol
import Testing

@Suite("Connection limits and concurrency", .timeLimit(.minutes(3)))
struct ConnectionLimitTests {
    private static let getStatus = #"{"method":"io.cordon.Agent.GetStatus"}"#

    @Test func connectionsBeyondTheLimitAreRefused() async throws {
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerUID = 3
        try await withTestAgent(limits: limits) { agent in
            var admitted: [RawSocket] = []
            for _ in 0..<3 {
                let raw = try agent.raw()
                // A round trip proves the agent admitted the connection.
                #expect(try raw.call(Self.getStatus).error == nil)
                admitted.append(raw)
            }
            let fourth = try agent.raw()
            let refusal = try fourth.readReply()
            #expect(refusal.error == "io.cordon.Agent.TooManyConnections", "\(refusal.text)")
            #expect(refusal["limit"]?.intValue == 3)
            #expect(try fourth.readsEOF())

            // The admitted ones keep working, and closing one makes room again.
            for raw in admitted { #expect(try raw.call(Self.getStatus).error == nil) }
            admitted.removeLast()
            try await eventually("a free connection slot") {
                // A refused attempt may see the agent close before its call is sent: try again.
                guard let raw = try? agent.raw(), let reply = try? raw.call(Self.getStatus) else { return false }
                return reply.error == nil
            }
        }
    }

    @Test func clientSeesTooManyConnections() async throws {
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerUID = 1
        try await withTestAgent(limits: limits) { agent in
            let client = try await agent.client()
            #expect(try await client.status().state == .uninitialized)
            // The refusal can arrive during connect, or as the answer to the first call.
            var outcome = "admitted"
            do {
                let second = try await agent.client()
                do {
                    _ = try await second.status()
                } catch {
                    outcome = String(describing: error)
                }
                await second.close()
            } catch {
                outcome = String(describing: error)
            }
            #expect(outcome != "admitted")
            #expect(outcome.contains("io.cordon.Agent.TooManyConnections"), "\(outcome)")
            // The admitted client is not disturbed.
            #expect(try await client.status().state == .uninitialized)
            await client.close()
        }
    }

    @Test func hundredConcurrentClients() async throws {
        try await withTestAgent { agent in
            let socketPath = agent.socketPath
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        if index == 0 {
                            let app = try await CordonApp.connect(
                                appId: "com.example.concurrent", socketPath: socketPath)
                            #expect(app.managed)
                            let client = try await CordonClient.connect(socketPath: socketPath)
                            let apps = try await client.apps()
                            #expect(apps.map(\.appId) == ["com.example.concurrent"])
                            await client.close()
                            await app.close()
                            return 1
                        }
                        let client = try await CordonClient.connect(socketPath: socketPath)
                        var answered = 0
                        for _ in 0..<5 {
                            let status = try await client.status()
                            #expect(status.state == .uninitialized)
                            answered += 1
                        }
                        await client.close()
                        return answered
                    }
                }
                var total: [Int] = []
                for try await answered in group { total.append(answered) }
                return total
            }
            #expect(results.count == 100)
            let total: Int = results.reduce(0, +)
            #expect(total == 496)  // 99 clients × 5 status calls, plus the app
        }
    }
}
