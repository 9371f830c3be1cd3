import CCordonBench
import Foundation

/// The cordond side of the fan-out: `Lock` on the control connection, timed until the last
/// subscription has received `DidLock`; every subscription is read by one epoll loop (C).
final class VarlinkFanout {
    private let agent: BenchAgent
    private let sockets: SocketSet
    private let fanout: OpaquePointer
    private let timeoutMs: Int32

    /// Watches every subscription in `sockets`; the agent must be unlocked.
    init(agent: BenchAgent, sockets: SocketSet, timeoutMs: Int32 = 30_000) throws {
        self.agent = agent
        self.sockets = sockets
        self.timeoutMs = timeoutMs
        var fanout: OpaquePointer?
        let descriptors = sockets.descriptors
        try FanoutError.check(
            "epoll", ccb_stream_fanout_new(descriptors, Int32(descriptors.count), &fanout))
        guard let fanout else { throw FanoutError.call("epoll", Int64(ENOMEM)) }
        self.fanout = fanout
    }

    /// One round: Lock → every `DidLock` (timed; the daemon's and the receiver's CPU until the
    /// Lock reply), then Unlock → every `DidUnlock` (untimed).
    func round() throws -> FanoutSample {
        let lock = try VarlinkConnection.encode(method: "io.cordon.Agent.Lock", parameters: [:], more: false)
        let daemonCPU = ProcessCPU.nanoseconds(pid: agent.pid)
        let receiverCPU = ccb_thread_cpu_ns()
        let start = ccb_now_ns()
        try agent.control.send(lock)
        let last = try FanoutError.check("DidLock fan-out", ccb_stream_fanout_wait(fanout, "\"DidLock\"", timeoutMs))
        let receiverUsed = ccb_thread_cpu_ns() - receiverCPU
        let reply = try agent.control.receive()
        let daemonUsed = ProcessCPU.used(daemonCPU, ProcessCPU.nanoseconds(pid: agent.pid))
        guard !reply.contains("\"error\"") else { throw FanoutError.agent("Lock: \(reply.prefix(200))") }
        try agent.unlock()
        try FanoutError.check("DidUnlock fan-out", ccb_stream_fanout_wait(fanout, "\"DidUnlock\"", timeoutMs))
        return FanoutSample(wall: UInt64(last - start), daemonCPU: daemonUsed, receiverCPU: UInt64(receiverUsed))
    }

    deinit { ccb_stream_fanout_free(fanout) }
}
