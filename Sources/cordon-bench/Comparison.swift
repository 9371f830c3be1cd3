import Foundation

/// Two sides measured in several runs: each run's medians, and a row that reports the median of
/// the runs' medians with their spread (min–max) and, against a baseline, the ratio per run.
enum Comparison {
    /// One side across runs.
    struct Side {
        let runs: [LatencyStats]

        /// The median of the runs' medians, µs.
        var median: Double {
            let sorted = runs.map(\.medianMicroseconds).sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }

        /// The lowest and highest of the runs' medians, µs.
        var spread: (Double, Double) {
            let medians = runs.map(\.medianMicroseconds)
            return (medians.min() ?? 0, medians.max() ?? 0)
        }

        /// The median of the runs' p99s, µs.
        var p99: Double {
            let sorted = runs.map(\.p99Microseconds).sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
    }

    /// `measure` run `count` times; both sides of every run.
    static func runs(_ count: Int, _ measure: () -> (LatencyStats, LatencyStats)) -> (Side, Side) {
        var sides: ([LatencyStats], [LatencyStats]) = ([], [])
        for _ in 0..<max(count, 1) {
            let (first, second) = measure()
            sides.0.append(first)
            sides.1.append(second)
        }
        return (Side(runs: sides.0), Side(runs: sides.1))
    }

    /// A printed row: median [spread] p99, and against `baseline` the ratio of medians with each run's.
    static func row(_ name: String, _ side: Side, against baseline: Side? = nil, named baselineName: String = "") {
        let (low, high) = side.spread
        var line =
            name.padding(toLength: 22, withPad: " ", startingAt: 0)
            + String(format: "%10.2f [%.2f–%.2f] %10.2f", side.median, low, high, side.p99)
        if let baseline {
            let ratios = zip(side.runs, baseline.runs).map {
                String(format: "%.2f", $0.medianMicroseconds / max($1.medianMicroseconds, 0.001))
            }
            line +=
                String(format: "   %.2fx %@", side.median / max(baseline.median, 0.001), baselineName)
                + " (runs: \(ratios.joined(separator: " ")))"
        }
        print(line)
    }
}

/// A peer command-line program, run as a user would: its output discarded, no terminal.
enum Peer {
    /// The path of `name` on PATH, or nil.
    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts `path` with `arguments` (stdin, stdout and stderr on /dev/null) and waits for it.
    static func run(_ path: String, _ arguments: [String]) {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(
                &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }
}
