import CordonKit
import CordonProtocol
import Foundation
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
        limits.maxConnectionsPerProcess = 1
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
            #expect(outcome == String(describing: CordonError.tooManyConnections(limit: 1)), "\(outcome)")
            // The admitted client is not disturbed.
            #expect(try await client.status().state == .uninitialized)
            await client.close()
        }
    }

    @Test func hundredConcurrentClients() async throws {
        // This one test process plays all hundred clients.
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerProcess = 128
        try await withTestAgent(limits: limits) { agent in
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

    /// One process may not take every connection the user has: past its own cap it is refused
    /// with `TooManyProcessConnections` (its pid and the cap), while another process of the
    /// same user still gets in.
    @Test func oneProcessCannotTakeEveryConnection() async throws {
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerProcess = 3
        try await withTestAgent(limits: limits) { agent in
            var held: [RawSocket] = []
            for _ in 0..<3 {
                let raw = try agent.raw()
                #expect(try raw.call(Self.getStatus).error == nil)
                held.append(raw)
            }
            let fourth = try agent.raw()
            let refusal = try fourth.readReply()
            #expect(refusal.error == "io.cordon.Agent.TooManyProcessConnections", "\(refusal.text)")
            #expect(refusal["pid"]?.intValue == Int(getpid()))
            #expect(refusal["limit"]?.intValue == 3)
            #expect(try fourth.readsEOF())

            // Another process of the same user: admitted.
            let other = try Self.callFromAnotherProcess(Self.getStatus, socket: agent.socketPath)
            #expect(other.contains(#""state":"uninitialized""#), "\(other)")
            // Closing one of ours makes room for this process again.
            held.removeLast()
            try await eventually("a free slot for this process") {
                guard let raw = try? agent.raw(), let reply = try? raw.call(Self.getStatus) else { return false }
                return reply.error == nil
            }
        }
    }

    /// Idle connections that never register cannot lock the next app out: once the idle
    /// timeout passes each gets `ConnectionIdle` and is closed, and the app gets in. A
    /// registered app's connection and a subscriber, idle just as long, stay.
    @Test func idleConnectionsThatNeverRegisterAreClosed() async throws {
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerUID = 6
        limits.maxConnectionsPerProcess = 6
        limits.idleConnectionTimeout = .seconds(3)
        try await withTestAgent(limits: limits) { agent in
            // On a loaded machine the app's connections may sit out the short timeout before they
            // register and subscribe: then it tries again, under another id (the half-made
            // registration of the last try may not be gone yet), a test artefact of a short timeout.
            var registered: CordonApp?
            var attempt = 0
            try await eventually("the app registers") {
                attempt += 1
                do {
                    registered = try await agent.app("com.example.stays\(attempt)")
                } catch CordonError.connectionIdle {}
                return registered != nil
            }
            let app = try #require(registered)
            // The attack: the four slots left are taken by connections that make one call and
            // then sit there (while they do, another app is refused, as in
            // `connectionsBeyondTheLimitAreRefused`).
            var idle: [RawSocket] = []
            for _ in 0..<4 {
                let raw = try agent.raw()
                #expect(try raw.call(Self.getStatus).error == nil)
                idle.append(raw)
            }
            for raw in idle {
                let reply = try raw.readReply()  // blocks until the agent closes it: no sleeping here
                #expect(reply.error == "io.cordon.Agent.ConnectionIdle", "\(reply.text)")
                #expect(reply["seconds"]?.doubleValue == 3)
                #expect(try raw.readsEOF())
            }
            idle.removeAll()
            // Under load this app, too, may sit out the timeout before it registers: each try
            // under a new id, as above.
            var next: CordonApp?
            var nextAttempt = 0
            try await eventually("the next app gets in") {
                nextAttempt += 1
                next = try? await agent.app("com.example.next\(nextAttempt)")
                return next != nil
            }
            #expect(next?.managed == true)
            try await app.reportActivity()  // the registered app's connection stayed
            await next?.close()
            await app.close()
        }
    }

    /// Sends `call` from a separate process (python3) and returns the reply it read.
    static func callFromAnotherProcess(_ call: String, socket: String) throws -> String {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            s.sendall(sys.argv[2].encode() + b"\\0")
            data = b""
            while not data.endswith(b"\\0"):
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.rstrip(b"\\0").decode())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, socket, call]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
