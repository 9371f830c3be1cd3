import Foundation

/// Files, timing and the age CLI for `StorageFileBenchmark`.
enum StorageFileIO {
    /// Writes `bytes` random bytes to `path`, 1 MiB at a time (the process stays small).
    static func writeRandomFile(_ path: String, bytes: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in block.indices { block[index] = UInt8.random(in: 0...255, using: &generator) }
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var written = 0
        while written < bytes {
            let count = min(block.count, bytes - written)
            block[0] &+= 1  // no two blocks alike
            try handle.write(contentsOf: block[..<count])
            written += count
        }
    }

    /// Seconds `body` takes (monotonic clock).
    static func timed(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The wall-clock and CPU seconds of one timed operation.
    struct Cost {
        let wall: Double
        let cpu: Double
    }

    /// The lowest wall-clock and CPU seconds seen for one side, and every run's.
    struct Best {
        var wall = Double.infinity
        var cpu = Double.infinity
        /// Each run's cost, in order.
        var costs: [Cost] = []

        mutating func add(_ cost: Cost) {
            wall = min(wall, cost.wall)
            cpu = min(cpu, cost.cpu)
            costs.append(cost)
        }
    }

    /// The wall-clock seconds `body` takes, and the CPU seconds this process and the children it
    /// reaped meanwhile (the `age` CLI) used.
    static func measured(_ body: () throws -> Void) rethrows -> Cost {
        let cpuBefore = cpuSeconds()
        let wall = try timed(body)
        return Cost(wall: wall, cpu: cpuSeconds() - cpuBefore)
    }

    /// CPU seconds (user and system) of this process and of its reaped children so far.
    static func cpuSeconds() -> Double {
        var own = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &own)
        var children = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &children)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return Double(own.tv_sec) + Double(own.tv_nsec) / 1e9 + seconds(children.ru_utime)
            + seconds(children.ru_stime)
    }

    /// Opens `input` for reading and `output` for writing (created, truncated) around `body`.
    static func withDescriptors(_ input: String, _ output: String, _ body: (Int32, Int32) throws -> Void) throws {
        let source = open(input, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw BenchError.daemon("cannot open \(input): errno \(errno)") }
        defer { close(source) }
        let target = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw BenchError.daemon("cannot open \(output): errno \(errno)") }
        defer { close(target) }
        try body(source, target)
    }

    /// Runs the age CLI single-threaded (GOMAXPROCS=1) and fails unless it succeeds.
    static func runAge(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ["GOMAXPROCS": "1", "PATH": "/usr/bin:/bin"]
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError.daemon("age \(arguments.first ?? "") failed: \(message)")
        }
    }

    /// Flushes the file at `path` to the disk (fsync).
    static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchError.daemon("cannot open \(path): errno \(errno)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw BenchError.daemon("fsync \(path): errno \(errno)") }
    }

    /// This process's peak resident set (VmHWM) in KiB.
    static func peakResidentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
