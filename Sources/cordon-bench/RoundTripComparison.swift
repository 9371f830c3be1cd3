import CCordonBench
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Measures one varlink call over the agent's socket against an echo server in a separate
/// process (plain C, `ccb_echo_spawn`) that answers with a reply of the agent's reply size, with
/// the same blocking client: their difference is the agent's own cost per call.
///
/// The two sides alternate call by call (agent, echo, agent, echo …) so that whatever else the
/// machine does falls on both alike, and each placement is measured `runs` times so the report
/// shows the spread, not one lucky run (docs/PERFORMANCE.md, "Round trips").
struct RoundTripComparison {
    let directory: String
    let iterations: Int
    let warmup: Int
    var runs = 5
    var placements: [RoundTripPlacement] = RoundTripPlacement.allCases

    /// A new connection to the agent at `socketPath` that has sent each of `calls` (e.g. a
    /// Register); any error reply throws, naming `name`.
    static func connect(name: String, socketPath: String, calls: [String]) throws -> RawUnixSocket {
        let agent = try RawUnixSocket.connect(to: socketPath)
        try send(calls, on: agent, name: name)
        return agent
    }

    /// Measures `text` on `agent` (a connection of `connect`), after sending each call of
    /// `prelude` on it; any error reply, there or to `text`, throws.
    func run(name: String, request text: String, agent: RawUnixSocket, prelude: [String] = []) throws -> RTTReport {
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
        defer { _ = ccb_pin_thread(-1) }

        var reports: [RTTPlacementReport] = []
        for placement in placements where placement.isPossible {
            try placement.apply(agent: agentPid, echo: echoPid)
            _ = try measure(agent, echo, request: request, count: warmup)
            var measured: [RTTRun] = []
            for _ in 0..<runs {
                let (agentStats, echoStats) = try measure(agent, echo, request: request, count: iterations)
                measured.append(RTTRun(agent: agentStats, echo: echoStats, target: placement.target(method: name)))
            }
            reports.append(
                RTTPlacementReport(placement: placement, target: placement.target(method: name), runs: measured))
        }
        try RoundTripPlacement.unpinned.apply(agent: agentPid, echo: echoPid)
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

    /// `count` round trips on each side, alternating.
    private func measure(_ agent: RawUnixSocket, _ echo: RawUnixSocket, request: [UInt8], count: Int) throws -> (
        LatencyStats, LatencyStats
    ) {
        var samples: ([UInt64], [UInt64]) = ([], [])
        samples.0.reserveCapacity(count)
        samples.1.reserveCapacity(count)
        for _ in 0..<count {
            var start = DispatchTime.now().uptimeNanoseconds
            try agent.send(request)
            _ = try agent.receiveMessage()
            samples.0.append(DispatchTime.now().uptimeNanoseconds - start)
            start = DispatchTime.now().uptimeNanoseconds
            try echo.send(request)
            _ = try echo.receiveMessage()
            samples.1.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return (LatencyStats(samples: samples.0), LatencyStats(samples: samples.1))
    }
}
