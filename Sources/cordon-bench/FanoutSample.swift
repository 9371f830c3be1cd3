/// One fan-out round: the time to the last receiver, and the CPU the daemon and the receiving
/// thread used for it (nanoseconds).
struct FanoutSample {
    let wall: UInt64
    let daemonCPU: UInt64
    let receiverCPU: UInt64
}
