import Dispatch
import Foundation

/// Measures one varlink call over the agent's socket, then a raw Unix-socket echo of the same
/// request and reply sizes, with the same blocking client: their ratio is what the agent adds.
struct RoundTripComparison {
    let directory: String
    let iterations: Int
    let warmup: Int

    func run(name: String, request text: String, socketPath: String) throws -> RTTReport {
        let request = Array(text.utf8) + [0]
        let agent = try RawUnixSocket.connect(to: socketPath)
        try agent.send(request)
        let replyLength = try agent.receiveMessage()
        let agentStats = try measure(agent, request: request)

        let echoPath = directory + "/echo-\(name).sock"
        let listener = try RawUnixSocket.listen(at: echoPath)
        let reply = [UInt8](repeating: 0x20, count: replyLength) + [0]
        let echoThread = Thread {
            guard let connection = try? listener.accept() else { return }
            while (try? connection.receiveMessage()) != nil {
                if (try? connection.send(reply)) == nil { return }
            }
        }
        echoThread.start()
        let echo = try RawUnixSocket.connect(to: echoPath)
        let echoStats = try measure(echo, request: request)
        return RTTReport(
            method: name, requestBytes: request.count, replyBytes: replyLength + 1, agent: agentStats,
            rawEcho: echoStats, medianRatio: agentStats.medianMicroseconds / echoStats.medianMicroseconds,
            p99Ratio: agentStats.p99Microseconds / echoStats.p99Microseconds, target: "median ratio <= 2.0")
    }

    private func measure(_ socket: RawUnixSocket, request: [UInt8]) throws -> LatencyStats {
        for _ in 0..<warmup {
            try socket.send(request)
            _ = try socket.receiveMessage()
        }
        var samples = [UInt64]()
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            try socket.send(request)
            _ = try socket.receiveMessage()
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return LatencyStats(samples: samples)
    }
}
