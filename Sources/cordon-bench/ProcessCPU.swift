import Foundation

/// CPU time a process has used, summed over its threads (/proc/PID/task/*/schedstat, ns).
enum ProcessCPU {
    /// Nanoseconds on a CPU so far, or 0 when /proc cannot be read.
    static func nanoseconds(pid: Int32) -> UInt64 {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return 0 }
        var total: UInt64 = 0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8),
                let field = text.split(separator: " ").first, let value = UInt64(field)
            else { continue }
            total += value
        }
        return total
    }
}
