import CordonLocking
import Foundation

/// Runs a long-lived command and collects its stdout lines as they arrive.
final class LineReader: Sendable {
    let process: Process
    private let lines = Locked<[String]>([])

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
        readLines(from: pipe.fileHandleForReading) { [self] line in lines.withLock { $0.append(line) } }
    }

    /// The lines read so far.
    var snapshot: [String] { lines.withLock { $0 } }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Reads `handle` to its end on a Dispatch thread (never the cooperative pool), handing each
/// complete line to `onLine`.
func readLines(from handle: FileHandle, _ onLine: @escaping @Sendable (String) -> Void) {
    DispatchQueue.global().async {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                onLine(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
    }
}
