import CCordonBench

/// CPU time a process has used, in nanoseconds.
enum ProcessCPU {
    /// Nanoseconds on a CPU so far (every thread, ended ones included), or 0 when unknown.
    ///
    /// The process CPU clock, not a sum over `/proc/PID/task`: a thread that ends between two
    /// readings would make that sum go backwards.
    static func nanoseconds(pid: Int32) -> UInt64 {
        UInt64(max(ccb_process_cpu_ns(pid), 0))
    }

    /// `after - before`, or 0 if a clock went backwards.
    static func used(_ before: UInt64, _ after: UInt64) -> UInt64 {
        after >= before ? after - before : 0
    }
}
