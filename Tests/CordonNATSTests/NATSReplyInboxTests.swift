import CordonLocking
import CordonNATS
import CordonNATSLoop
import Foundation
import NATSTestServer
import Testing

/// Requests (a publish the stream acknowledges, a direct get) go through one inbox subscription per
/// connection, delivered by the library's shared pool: many connections on one event loop add no
/// thread per connection. nats.c's own request path made one thread per connection, which at
/// 10,000 simulated machines was 10,000 threads (docs/PERFORMANCE.md, "Fleet push").
@Suite(.serialized) struct NATSReplyInboxTests {
    /// Threads of this process named `name` (Linux threads inherit their creator's name).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// Runs `body` on a new thread named `name` and waits for it.
    static func onNamedThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Thread.current.name = name
            body()
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        done.wait()
    }

    @Test func requestsOnManyConnectionsAddNoThreadPerConnection() throws {
        let count = 50
        let setup = try NATSConnectionTests.setUp(machines: (0..<count).map { "m\($0)" })
        defer { setup.server.stop() }
        for machine in setup.machines {
            try setup.admin.publishToStream(machine.subject, Array("for \(machine.name)".utf8))
        }
        let loop = try #require(NATSEpollLoop())
        defer { loop.stop() }
        let name = "cordon-req-test"
        let results = Locked<[String]>([])
        let connections = Locked<[NATSConnection]>([])
        let threadsWhileConnected = Locked(0)
        Self.onNamedThread(name) {
            for machine in setup.machines {
                var options = machine.options(setup.server)
                options.eventLoop = loop
                do {
                    let connection = try NATSConnection(options)
                    connections.withLock { $0.append(connection) }
                    let kept = try connection.lastMessage(stream: NATSConnectionTests.stream, subject: machine.subject)
                    results.withLock { $0.append(kept.map { String(decoding: $0.data, as: UTF8.self) } ?? "none") }
                } catch {
                    results.withLock { $0.append("\(machine.name): \(error)") }
                }
            }
            // This thread, the library's shared delivery thread(s) it started; none per connection.
            threadsWhileConnected.withLock { $0 = Self.threads(named: name) }
        }
        defer { for connection in connections.withLock({ $0 }) { connection.close() } }
        #expect(results.withLock { $0 } == setup.machines.map { "for \($0.name)" })
        let threads = threadsWhileConnected.withLock { $0 }
        #expect(threads >= 1, "the requesting thread is named \(name)")
        #expect(threads < 5, "\(threads) threads for \(count) connections' requests")
    }

    @Test func aStreamsRefusalAndAMissingStreamAreNamed() throws {
        let setup = try NATSConnectionTests.setUp(machines: [])
        defer { setup.server.stop() }
        // No stream keeps this subject: nobody answers, and the caller hears so at once.
        let unkept = #expect(throws: NATSError.self) {
            try setup.admin.publishToStream("cordon.elsewhere", Array("x".utf8), timeout: 2)
        }
        #expect(unkept?.status.lowercased() == "no responders available for request", "\(String(describing: unkept))")
        // A message over the stream's limit: the stream's own error, with its JetStream code.
        var limited = NATSConnection.StreamConfiguration(name: "LIMITED", subjects: ["cordon.limited.>"])
        limited.maxMessageSize = 16
        try setup.admin.addStream(limited)
        let large = #expect(throws: NATSError.self) {
            try setup.admin.publishToStream("cordon.limited.a", Array(repeating: 0x41, count: 64))
        }
        #expect(large?.jetStreamCode == 10054, "\(String(describing: large))")
        #expect(large?.description.contains("maximum") == true, "\(String(describing: large))")
        // A subject with no message: nil, not an error; a stream that does not exist: an error.
        #expect(try setup.admin.lastMessage(stream: "LIMITED", subject: "cordon.limited.b") == nil)
        #expect(throws: NATSError.self) {
            try setup.admin.lastMessage(stream: "NOSUCH", subject: "cordon.limited.b", timeout: 2)
        }
    }

    @Test func aClosedConnectionsRequestFailsAsClosed() throws {
        let setup = try NATSConnectionTests.setUp(machines: [])
        defer { setup.server.stop() }
        setup.admin.close()
        let error = #expect(throws: NATSError.self) {
            try setup.admin.lastMessage(stream: NATSConnectionTests.stream, subject: "cordon.fleet.cmd.a")
        }
        #expect(error?.isClosed == true)
    }
}

/// Connections on the epoll loop (the fleet swarm's) after nats-server restarts: each still gets
/// live messages on its subscriptions and answers its requests. nats.c's own libuv adapter failed
/// this every time (a reconnected connection's flush timed out, and `uv_run` sometimes aborted):
/// it kept polling sockets the library had closed (docs/PERFORMANCE.md, "Fleet push"). fleetd
/// keeps the library's own threads
/// (`NATSConnectionTests.aMachineComesBackAfterTheServerRestartsAndReadsWhatItMissed`).
@Suite(.serialized) struct NATSEventLoopRestartTests {
    @Test func machinesOnTheLoopFollowLiveMessagesAfterARestart() async throws {
        let count = 200
        let setup = try NATSConnectionTests.setUp(machines: (0..<count).map { "r\($0)" })
        defer { setup.server.stop() }
        let loop = try #require(NATSEpollLoop())
        defer { loop.stop() }
        let reconnected = Locked(Set<Int>())
        let received = Locked([Int: [String]]())
        var connections: [NATSConnection] = []
        defer { for connection in connections { connection.close() } }
        for (index, machine) in setup.machines.enumerated() {
            var options = machine.options(setup.server)
            options.eventLoop = loop
            // As fleetd does: at each (re)connection, read what the stream kept (a request).
            let holder = Locked<NATSConnection?>(nil)
            let subject = machine.subject
            let connection = try NATSConnection(options) { event in
                guard event == .reconnected || event == .connected else { return }
                DispatchQueue.global().async {
                    _ = try? holder.withLock { $0 }?.lastMessage(stream: NATSConnectionTests.stream, subject: subject)
                    if event == .reconnected { reconnected.withLock { _ = $0.insert(index) } }
                }
            }
            holder.withLock { $0 = connection }
            try connection.subscribe(machine.subject) { message in
                received.withLock { $0[index, default: []].append(String(decoding: message.data, as: UTF8.self)) }
            }
            connections.append(connection)
        }
        for connection in connections { try connection.flush() }
        setup.server.halt()
        try setup.server.restart()
        for _ in 0..<400 where reconnected.withLock({ $0.count }) < count {
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(reconnected.withLock { $0.count } == count)
        try setup.admin.flush(timeout: 10)
        for connection in connections { try connection.flush(timeout: 10) }
        for machine in setup.machines { try setup.admin.publish(machine.subject, Array("live".utf8)) }
        try setup.admin.flush()
        for _ in 0..<200 where received.withLock({ $0.values.filter { $0.contains("live") }.count }) < count {
            try await Task.sleep(for: .milliseconds(25))
        }
        let got = received.withLock { $0 }
        let missing = (0..<count).filter { got[$0]?.contains("live") != true }
        #expect(received.withLock { $0.values.filter { $0.contains("live") }.count } == count, "missed: \(missing)")
    }
}
