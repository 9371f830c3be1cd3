import CCordonBench
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Measures one varlink call over the agent's socket against an echo server in a separate
/// process (plain C, `ccb_echo_spawn`) that answers with a reply of the agent's reply size, with
/// the same blocking client, waiting for each reply as `wait` says: their difference is the
/// agent's own cost per call.
///
/// The two sides alternate call by call (agent, echo, agent, echo …) so that whatever else the
/// machine does falls on both alike, and each placement is measured `runs` times so the report
/// shows the spread, not one lucky run (docs/PERFORMANCE.md, "Round trips").
///
/// After each run, a second pass measures the floor (`ccb_floor_spawn`) against the echo the same
/// way: a C process that makes the system calls the agent's loop must make for a call of a
/// registered app (its event loop's wait, the read that names the writer, the check that the
/// writer is still that non-dumpable process, the send; without the check for a connection that
/// registered none) and does nothing else. Floor ÷ echo is what the design's per-call system
/// calls cost; the rest of the agent's ratio is its own work (docs/PERFORMANCE.md, "The floor and
/// how the client waits"). A pass of its own, so a third side never changes the conditions the
/// targeted ratio is measured in.
struct RoundTripComparison {
    let directory: String
    let iterations: Int
    let warmup: Int
    var runs = 5
    var placements: [RoundTripPlacement] = RoundTripPlacement.allCases
    /// How the client waits for each reply, on both sides.
    var wait = ClientWait.read

    /// A new connection to the agent at `socketPath` that has sent each of `calls` (e.g. a
    /// Register); any error reply throws, naming `name`.
    static func connect(name: String, socketPath: String, calls: [String]) throws -> RawUnixSocket {
        let agent = try RawUnixSocket.connect(to: socketPath)
        try send(calls, on: agent, name: name)
        return agent
    }

    /// Measures `text` on `agent` (a connection of `connect`), after sending each call of
    /// `prelude` on it; any error reply, there or to `text`, throws. `registered`: the connection
    /// registered an app, so the agent checks its process on every data call, and so does the floor.
    func run(name: String, request text: String, agent: RawUnixSocket, prelude: [String] = [], registered: Bool)
        throws -> RTTReport
    {
        let request = Array(text.utf8) + [0]
        let agentPid = try agent.peerProcess()
        try Self.send(prelude + [text], on: agent, name: name)
        try agent.send(request)
        let replyLength = try agent.receiveMessage()

        let echoPath = directory + "/echo-\(name).sock"
        let echoPid = ccb_echo_spawn(echoPath, replyLength, -1)
        guard echoPid > 0 else { throw BenchError.system("starting the echo process", -echoPid) }
        defer { ccb_echo_stop(echoPid) }
        let echo = try RawUnixSocket.connect(to: echoPath)
        let floorPath = directory + "/floor-\(name).sock"
        let floorPid = ccb_floor_spawn(floorPath, replyLength, -1, registered ? 1 : 0)
        guard floorPid > 0 else { throw BenchError.system("starting the floor process", -floorPid) }
        defer { ccb_echo_stop(floorPid) }
        let floor = try RawUnixSocket.connect(to: floorPath)
        defer { _ = ccb_pin_thread(-1) }
        (agent.wait, echo.wait, floor.wait) = (wait, wait, wait)

        var reports: [RTTPlacementReport] = []
        for placement in placements where placement.isPossible {
            try placement.apply(agent: agentPid, echo: echoPid, floor: floorPid)
            _ = try measure([agent, echo], request: request, count: warmup)
            _ = try measure([floor, echo], request: request, count: warmup)
            var measured: [RTTRun] = []
            for _ in 0..<runs {
                let stats = try measure([agent, echo], request: request, count: iterations)
                let floorStats = try measure([floor, echo], request: request, count: iterations)
                measured.append(
                    RTTRun(
                        agent: stats[0], echo: stats[1], floor: floorStats[0], floorEcho: floorStats[1],
                        target: placement.target(method: name)))
            }
            reports.append(
                RTTPlacementReport(placement: placement, target: placement.target(method: name), runs: measured))
        }
        try RoundTripPlacement.unpinned.apply(agent: agentPid, echo: echoPid, floor: floorPid)
        return RTTReport(
            method: name, requestBytes: request.count, replyBytes: replyLength + 1, placements: reports)
    }

    private static func send(_ calls: [String], on agent: RawUnixSocket, name: String) throws {
        for call in calls {
            try agent.send(Array(call.utf8) + [0])
            let reply = try agent.receiveText()
            if let error = (try? VarlinkConnection.decode(reply))?["error"] {
                throw BenchError.daemon("\(name): \(call.prefix(80)) answered \(error)")
            }
        }
    }

    /// `count` round trips on each side, the sides in turn call by call.
    private func measure(_ sides: [RawUnixSocket], request: [UInt8], count: Int) throws -> [LatencyStats] {
        var samples = [[UInt64]](repeating: [], count: sides.count)
        for index in samples.indices { samples[index].reserveCapacity(count) }
        for _ in 0..<count {
            for (index, side) in sides.enumerated() {
                let start = DispatchTime.now().uptimeNanoseconds
                try side.send(request)
                _ = try side.receiveMessage()
                samples[index].append(DispatchTime.now().uptimeNanoseconds - start)
            }
        }
        return samples.map { LatencyStats(samples: $0) }
    }
}
