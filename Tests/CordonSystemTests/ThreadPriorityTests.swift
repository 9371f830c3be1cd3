import CordonLocking
import CordonSystem
import Foundation
import Testing

/// `ThreadPriority` lowers the calling thread's priority only (the agent's store thread runs below
/// its loop): the kernel's own record of each thread's nice value says so.
@Suite struct ThreadPriorityTests {
    /// The nice value `/proc/self/task/TID/stat` gives thread `tid` (field 19).
    static func nice(of tid: Int32) throws -> Int32 {
        let stat = try String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)
        // The name (field 2) may hold spaces: count the fields after its closing parenthesis.
        let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
        return try #require(Int32(fields[16]))
    }

    @Test func lowersTheCallingThreadAndNoOther() throws {
        let before = try Self.nice(of: ThreadPriority.currentThreadID)
        let result = Locked<(tid: Int32, lowered: Int32?)?>(nil)
        let (lowered, checked) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        // The thread stays alive until its entry in /proc has been read.
        Thread.detachNewThread {
            let nice = ThreadPriority.lowerCurrentThread(by: 3)
            result.withLock { $0 = (ThreadPriority.currentThreadID, nice) }
            lowered.signal()
            checked.wait()
        }
        lowered.wait()
        defer { checked.signal() }
        let (tid, nice) = try #require(result.withLock { $0 })
        #expect(nice == min(before + 3, 19))
        #expect(try Self.nice(of: tid) == nice, "the kernel's record of that thread")
        #expect(try Self.nice(of: ThreadPriority.currentThreadID) == before, "the calling thread keeps its priority")
    }
}
