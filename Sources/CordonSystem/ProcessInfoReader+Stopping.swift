import Foundation

/// Whether a process runs, as the agent re-reads it from `/proc` for a process frozen with
/// signals (docs/ARCHITECTURE.md, "Freezing").
public enum ProcessRunState: Sendable, Equatable {
    /// Running or sleeping, with no stop pending: a SIGCONT resumed it, or it was never stopped.
    case running
    /// Stopped (SIGSTOP: state T), or traced (t).
    case stopped
    /// A SIGSTOP is pending and not yet acted on (the process is in the kernel).
    case stopping
    /// Gone, or a zombie.
    case gone
}

extension ProcessInfoReader {
    /// The state of `pid` from `/proc/PID/status`: its `State:` letter and the pending signals.
    public static func runState(of pid: Int32) -> ProcessRunState {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .gone }
        return runState(status: status)
    }

    /// The state described by the text of a `/proc/PID/status` file.
    public static func runState(status: String) -> ProcessRunState {
        var state: Character?
        var pending: UInt64 = 0
        for line in status.split(separator: "\n") {
            if line.hasPrefix("State:") {
                state = line.dropFirst("State:".count).first { $0 != " " && $0 != "\t" }
            } else if line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") {
                let hex = line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? ""
                pending |= UInt64(hex, radix: 16) ?? 0
            }
        }
        switch state {
        case nil, "Z", "X": return .gone
        case "T", "t": return .stopped
        default:
            // Signal N is bit N - 1 of the pending masks.
            return pending & (1 << UInt64(SIGSTOP - 1)) != 0 ? .stopping : .running
        }
    }

    /// The members of process group `pgrp`, from `/proc/*/stat`.
    public static func members(ofGroup pgrp: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { parentAndGroup(of: $0)?.pgrp == pgrp }.sorted()
    }

    /// When `pid` started, in clock ticks since boot (`/proc/PID/stat`, field 22), or nil.
    public static func startTime(of pid: Int32) -> UInt64? {
        ProcFile.withContents("/proc/\(pid)/stat") { ProcFile.statNumber($0, field: 22) }
    }
}
