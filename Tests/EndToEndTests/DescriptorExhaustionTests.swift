import Foundation
import Testing

/// cordond under a low `RLIMIT_NOFILE` (run through `prlimit`): clients exhaust its
/// descriptors; new connections wait, connections already open are still served, the agent
/// logs it and lives, and once descriptors are freed it accepts again. cordond runs as an ordinary
/// user outside test mode (``UserAgent``); the clients connect with that user's credentials.
@Suite struct DescriptorExhaustionTests {
    static let limit = 64
    static let exhaustedLine = "accept failed: out of file descriptors"
    /// Four of the agent's paced accept retries (`AcceptErrorLogger.backoff`, 250 ms).
    static let confirmation = Duration.seconds(1)

    @Test func exhaustionStallsNewConnectionsUntilDescriptorsAreFreed() async throws {
        raiseOpenFileLimit(to: 4096)
        let agent = try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            wrapper: ["/usr/bin/prlimit", "--nofile=\(Self.limit):\(Self.limit)"])
        defer { agent.cleanUp() }
        let pid = agent.process.processIdentifier  // setpriv and prlimit exec cordond
        #expect(ProcessStats.openFileLimit(pid) == Self.limit)
        let control = try RawVarlinkSocket(userPath: agent.socketPath)
        #expect(varlinkErrorName(try control.call(FaultFixtures.getStatus)) == nil)

        // Open connections, each answered, until one is not and the agent says why.
        var held: [RawVarlinkSocket] = []
        var probe: RawVarlinkSocket?
        while probe == nil, held.count < 10 * Self.limit {
            let socket = try RawVarlinkSocket(userPath: agent.socketPath)
            try socket.send(json: FaultFixtures.getStatus)
            try await eventually(timeout: 120, "connection \(held.count) is answered or refused") {
                socket.hasReplyBytes || agent.log.contains(Self.exhaustedLine)
            }
            // A descriptor the agent held for a moment (a file read) and then closed lets a
            // paced retry accept one more: unanswered through several retries, it is the probe.
            if !socket.hasReplyBytes {
                try await Task.sleep(for: Self.confirmation)
            }
            if socket.hasReplyBytes {
                _ = try socket.readMessage()
                held.append(socket)
            } else {
                probe = socket
            }
        }
        let stalled = try #require(probe, "\(held.count) connections never exhausted \(Self.limit) descriptors")
        let descriptors = ProcessStats.openDescriptors(pid)
        print("exhaustion: \(held.count) connections held, the agent has \(descriptors) descriptors open")

        // Exhausted: the agent lives, serves what it already accepted, and accepts nothing new.
        let cpuBefore = ProcessStats.cpuTicks(pid)
        try await Task.sleep(for: .seconds(2))  // A CPU sample window (reported, never asserted).
        print("exhaustion: agent CPU over 2 s while exhausted: \(ProcessStats.cpuTicks(pid) - cpuBefore) ticks")
        #expect(agent.process.isRunning)
        #expect(varlinkErrorName(try control.call(FaultFixtures.getStatus)) == nil)
        #expect(!stalled.hasReplyBytes, "a connection was served while descriptors were exhausted")

        // Freed: the stalled client is answered and new ones are served.
        held.removeAll()
        #expect(varlinkErrorName(try stalled.readMessage()) == nil)
        try await eventually(timeout: 120, "the agent logs that it accepts again") {
            agent.log.contains("accepting connections again")
        }
        // Paced retries, not a busy loop: a spinning agent fails tens of thousands of accepts a
        // second; paced at 4 a second this bound would take over half an hour of exhaustion.
        let failed = Self.failedAccepts(in: agent.log)
        print("exhaustion: \(failed) failed accepts before accepting again")
        #expect(failed < 10_000, "the agent retried accept in a busy loop")
        #expect(try await agent.status()["state"] as? String == "uninitialized")
    }

    /// The count in the agent's "accepting connections again" line.
    static func failedAccepts(in log: String) -> Int {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("accepting connections again") }),
            let range = line.range(of: "failedAccepts=")
        else { return 0 }
        return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}

/// systemd's soft limit of 1,024 descriptors would cap the agent far below its 4,096
/// connections; it raises its soft limit itself (up to the hard limit), as the user it runs as.
@Suite struct DescriptorLimitTests {
    static func started(soft: Int, hard: Int) async throws -> UserAgent {
        try await UserAgent(
            policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false,
            wrapper: ["/usr/bin/prlimit", "--nofile=\(soft):\(hard)"])
    }

    @Test func theSoftLimitIsRaisedForTheConnectionLimit() async throws {
        let agent = try await Self.started(soft: 1024, hard: 16384)
        defer { agent.cleanUp() }
        #expect(ProcessStats.openFileLimit(agent.process.processIdentifier) == 2 * 4096 + 256)
    }

    @Test func aLowHardLimitIsUsedWholeAndReported() async throws {
        let agent = try await Self.started(soft: 512, hard: 2048)
        defer { agent.cleanUp() }
        #expect(ProcessStats.openFileLimit(agent.process.processIdentifier) == 2048)
        try await eventually("the agent says its descriptor limit caps connections") {
            agent.log.contains("the descriptor limit caps connections")
        }
    }
}
