import CCordonBench
import Dispatch
import Foundation

/// Storage.Get over the agent's socket against real Secret Service peers, in the same run and
/// interleaved call by call (Storage.Get, then each peer call, again …), timed per call as the
/// agent and echo sides of `rtt` are; per placement, the peers' bus and daemon placed where the
/// agent is (docs/PERFORMANCE.md, "Secret Service peers").
struct SecretServiceComparison {
    /// One measured peer call.
    struct Side {
        let name: String
        /// The ratio Storage.Get / this call the issue sets (nil: for information).
        let target: Double?
        /// The processes placed with the agent (bus, daemon).
        let pids: [Int32]
        let call: () throws -> Void
    }

    let iterations: Int
    let warmup: Int
    let runs: Int
    let placements: [RoundTripPlacement]

    /// Measures Storage.Get (`request`, after `prelude` on `agent`, a connection whose app is
    /// registered) against `sides`.
    func run(request text: String, prelude: [String], agent: RawUnixSocket, sides: [Side]) throws
        -> SecretServiceReport
    {
        let request = Array(text.utf8) + [0]
        let agentPid = try agent.peerProcess()
        for call in prelude + [text] {
            try agent.send(Array(call.utf8) + [0])
            let reply = try agent.receiveText()
            if let error = (try? VarlinkConnection.decode(reply))?["error"] {
                throw BenchError.daemon("Storage.Get: \(call.prefix(80)) answered \(error)")
            }
        }
        defer { _ = ccb_pin_thread(-1) }
        var reports: [SecretServicePlacementReport] = []
        for placement in placements where placement.isPossible {
            try place(placement, agent: agentPid, sides: sides)
            _ = try measure(agent, request: request, sides: sides, count: warmup)
            var measured: [SecretServiceRun] = []
            for _ in 0..<runs {
                let (storage, peers) = try measure(agent, request: request, sides: sides, count: iterations)
                measured.append(
                    SecretServiceRun(
                        storageGet: storage,
                        peers: zip(sides, peers).map {
                            SecretServicePeerRun(name: $0.name, stats: $1, target: $0.target, storageGet: storage)
                        }
                    ))
            }
            reports.append(SecretServicePlacementReport(placement: placement, runs: measured))
        }
        try place(.unpinned, agent: agentPid, sides: sides)
        return SecretServiceReport(
            iterations: iterations, targets: sides.map { SecretServiceTarget(name: $0.name, target: $0.target) },
            placements: reports)
    }

    /// The client where the placement puts it, the agent and every peer process where it puts
    /// the agent.
    private func place(_ placement: RoundTripPlacement, agent: Int32, sides: [Side]) throws {
        let cpus = placement.cpus
        var rc = ccb_pin_thread(cpus.client)
        if rc != 0 { throw BenchError.system("pinning the client (\(placement.rawValue))", -rc) }
        for pid in [agent] + sides.flatMap(\.pids) {
            rc = ccb_pin_process(pid, cpus.agent)
            if rc != 0 { throw BenchError.system("pinning process \(pid) (\(placement.rawValue))", -rc) }
        }
    }

    /// `count` rounds of Storage.Get then each side's call, each timed alone.
    private func measure(_ agent: RawUnixSocket, request: [UInt8], sides: [Side], count: Int) throws -> (
        LatencyStats, [LatencyStats]
    ) {
        var storage: [UInt64] = []
        storage.reserveCapacity(count)
        var peers = [[UInt64]](repeating: [], count: sides.count)
        for index in peers.indices { peers[index].reserveCapacity(count) }
        for _ in 0..<count {
            var start = DispatchTime.now().uptimeNanoseconds
            try agent.send(request)
            _ = try agent.receiveMessage()
            storage.append(DispatchTime.now().uptimeNanoseconds - start)
            for (index, side) in sides.enumerated() {
                start = DispatchTime.now().uptimeNanoseconds
                try side.call()
                peers[index].append(DispatchTime.now().uptimeNanoseconds - start)
            }
        }
        return (LatencyStats(samples: storage), peers.map { LatencyStats(samples: $0) })
    }
}
