import CCordonBench
import Foundation

/// The dbus-daemon side of the fan-out: one sender emits a signal, timed until the last of `count`
/// sd-bus connections (each with a match for it) has dispatched it; every connection is read by
/// one epoll loop (C), the same design as the cordond side.
final class DBusFanout {
    static let match = "type='signal',interface='io.cordon.Bench',member='DidLock'"
    private let receivers: OpaquePointer
    private let sender: OpaquePointer
    private let timeoutMs: Int32
    private let daemonPID: Int32
    private var seq: UInt64 = 0

    /// Opens `count` receivers and one sender on the bus of `daemon`.
    init(daemon: DBusDaemon, count: Int, timeoutMs: Int32 = 30_000) throws {
        self.timeoutMs = timeoutMs
        daemonPID = daemon.pid
        let address = daemon.address
        var receivers: OpaquePointer?
        try FanoutError.check("sd-bus receivers", ccb_bus_fanout_open(address, Int32(count), Self.match, &receivers))
        guard let receivers else { throw FanoutError.call("sd-bus receivers", Int64(ENOMEM)) }
        var sender: OpaquePointer?
        do {
            try FanoutError.check("sd-bus sender", ccb_bus_sender_open(address, &sender))
        } catch {
            ccb_bus_fanout_free(receivers)
            throw error
        }
        guard let sender else {
            ccb_bus_fanout_free(receivers)
            throw FanoutError.call("sd-bus sender", Int64(ENOMEM))
        }
        self.receivers = receivers
        self.sender = sender
    }

    /// One round: emit → every receiver has dispatched it (timed; with the daemon's and the
    /// receiver's CPU).
    func round() throws -> FanoutSample {
        seq += 1
        let time = Date().timeIntervalSince1970
        let daemonCPU = ProcessCPU.nanoseconds(pid: daemonPID)
        let receiverCPU = ccb_thread_cpu_ns()
        let start = ccb_now_ns()
        try FanoutError.check("sd_bus_emit_signal", ccb_bus_emit(sender, seq, time))
        let last = try FanoutError.check("signal fan-out", ccb_bus_fanout_wait(receivers, timeoutMs))
        let receiverUsed = ccb_thread_cpu_ns() - receiverCPU
        let daemonUsed = ProcessCPU.used(daemonCPU, ProcessCPU.nanoseconds(pid: daemonPID))
        return FanoutSample(wall: UInt64(last - start), daemonCPU: daemonUsed, receiverCPU: UInt64(receiverUsed))
    }

    deinit {
        ccb_bus_fanout_free(receivers)
        ccb_bus_close(sender)
    }
}
