import Foundation

/// The result of running a command to completion.
struct CommandResult: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `executable` with `arguments`, feeding `input` on stdin, and waits for it.
func runCommand(
    _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]
) async throws -> CommandResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let output = Pipe()
    let errors = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = stdin
    try process.run()
    // Blocking reads and waits run on Dispatch threads, never on the cooperative pool.
    return await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            // A command may exit before reading its input: EPIPE is an error here, never a crash.
            if let input { try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
            try? stdin.fileHandleForWriting.close()
            let group = DispatchGroup()
            nonisolated(unsafe) var outData = Data()
            nonisolated(unsafe) var errData = Data()
            DispatchQueue.global().async(group: group) { outData = output.fileHandleForReading.readDataToEndOfFile() }
            DispatchQueue.global().async(group: group) { errData = errors.fileHandleForReading.readDataToEndOfFile() }
            group.wait()
            process.waitUntilExit()
            continuation.resume(
                returning: CommandResult(
                    status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                    stderr: String(decoding: errData, as: UTF8.self)))
        }
    }
}
