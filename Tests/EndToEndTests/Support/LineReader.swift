import Foundation
import Synchronization

/// Runs a long-lived command and collects its stdout lines as they arrive.
final class LineReader: Sendable {
    let process: Process
    private let lines = Mutex<[String]>([])

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = pipe.fileHandleForReading
        // A Dispatch thread does the blocking reads, never the cooperative pool.
        DispatchQueue.global().async { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    self.lines.withLock { $0.append(line) }
                }
            }
        }
    }

    /// The lines read so far.
    var snapshot: [String] { lines.withLock { $0 } }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
