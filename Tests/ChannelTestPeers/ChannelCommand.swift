import Foundation

/// Runs a program to its end and returns its exit status and output.
public struct ChannelCommand {
    /// A program that did not exit 0, or a peer that did not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Runs `arguments` (looked up on PATH), feeding `input`; returns (status, stdout, stderr).
    @discardableResult
    public static func run(_ arguments: [String], input: Data? = nil, in directory: URL? = nil) throws -> (
        status: Int32, output: String, error: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        // Read both to their end before waiting: a full pipe would block the child.
        let errorData = ChannelDataBox()
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        reading.wait()
        process.waitUntilExit()
        let errorText = String(decoding: errorData.get(), as: UTF8.self)
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), errorText)
    }

    /// Runs `arguments` and throws unless it exits 0; returns its stdout.
    @discardableResult
    public static func checked(_ arguments: [String], in directory: URL? = nil) throws -> String {
        let result = try run(arguments, in: directory)
        guard result.status == 0 else {
            throw Failure(description: "\(arguments.joined(separator: " ")) exited \(result.status): \(result.error)")
        }
        return result.output
    }
}
/// A value handed from a reading thread to the waiting one.
final class ChannelDataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
