import CCordonLinux

/// The calling thread's scheduling priority (Linux keeps a nice value per thread).
public enum ThreadPriority {
    /// Lowers the calling thread's priority by `steps` nice steps (no privilege needed); returns
    /// its nice value after, or nil when the kernel refused (the thread keeps its priority).
    public static func lowerCurrentThread(by steps: Int32) -> Int32? {
        var after: Int32 = 0
        return cordon_lower_thread_priority(steps, &after) == 0 ? after : nil
    }

    /// The calling thread's id (`gettid`): its entry under `/proc/self/task`.
    public static var currentThreadID: Int32 { cordon_gettid() }
}
