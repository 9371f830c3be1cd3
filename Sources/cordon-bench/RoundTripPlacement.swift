import ArgumentParser
import CCordonBench

/// Where the round-trip benchmark's three processes run (docs/PERFORMANCE.md, "Round trips"):
/// the placement decides as much as the code on a small machine, so each is measured and
/// reported on its own.
enum RoundTripPlacement: String, Codable, CaseIterable, ExpressibleByArgument {
    /// Client, agent and echo all on CPU 0: no cross-CPU wake-up, only the work per call.
    case oneCPU = "one-cpu"
    /// The client on CPU 0, the agent and the echo on CPU 1: every reply crosses CPUs.
    case split
    /// No pinning: where the scheduler puts them (an idle desktop's normal condition).
    case unpinned

    /// The CPUs of the client, the agent and the echo; `-1` is every CPU.
    var cpus: (client: Int32, agent: Int32, echo: Int32) {
        switch self {
        case .oneCPU: (0, 0, 0)
        case .split: (0, 1, 1)
        case .unpinned: (-1, -1, -1)
        }
    }

    /// The target for the median ratio agent / echo of `method`, where a performance issue sets one
    /// (#31, docs/PERFORMANCE.md, "Round trips"): the data calls may cost their work, the status
    /// calls almost nothing; unpinned figures are reported, not targeted (the scheduler's placement
    /// decides them).
    func target(method: String) -> Double? {
        switch (self, method) {
        case (.unpinned, _): nil
        case (.oneCPU, "Storage.Get"): 3.0
        case (.split, "Storage.Get"): 1.3
        case (.oneCPU, "Tokens.Code"), (.oneCPU, "Identity.GetToken"): 2.0
        case (.split, "Tokens.Code"), (.split, "Identity.GetToken"): 1.2
        case (.oneCPU, _): 1.5
        case (.split, _): 1.0
        }
    }

    /// Whether this machine has the CPUs the placement needs.
    var isPossible: Bool { self != .split || ccb_cpu_count() >= 2 }

    /// Pins the calling thread (the client), every thread of the agent, the echo process and the
    /// floor's (`RoundTripComparison`; on the echo's CPU).
    func apply(agent: Int32, echo: Int32, floor: Int32) throws {
        let cpus = cpus
        for (rc, what) in [
            (ccb_pin_thread(cpus.client), "the client"), (ccb_pin_process(agent, cpus.agent), "the agent"),
            (ccb_pin_process(echo, cpus.echo), "the echo"),
            (ccb_pin_process(floor, cpus.echo), "the floor"),
        ] where rc != 0 {
            throw BenchError.system("pinning \(what) (\(rawValue))", -rc)
        }
    }
}
