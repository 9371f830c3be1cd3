import Foundation

/// `Tests/CordonChannelTests/peers/tls_peer.py` in one mode, on a free 127.0.0.1 port; it stops
/// when `stop()` closes its stdin. Shared by the channel tests and the end-to-end tests.
public final class TLSPeer {
    public let process = Process()
    /// The port it listens on.
    public let port: Int
    private let input = Pipe()

    /// `Tests/CordonChannelTests/peers`: the TLS peer and the tunnel client.
    public static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CordonChannelTests/peers")

    /// Starts the peer in `mode` with the certificate and key at those paths.
    public init(mode: String, certificate: String, key: String) throws {
        let script = Self.peers.appendingPathComponent("tls_peer.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, mode, certificate, key]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        // The peer prints its port once it listens: read up to that line.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw ChannelCommand.Failure(description: "tls_peer.py did not start: \(text)")
        }
        self.port = port
    }

    /// Closes its stdin and ends it, then waits for it. Not on end-of-file alone: a child another
    /// test spawned at the same moment may have inherited the pipe's write end, and the peer would
    /// then wait for that child (a ThreadSanitizer run hung 15 minutes on a `sleep 1000` so).
    public func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { stop() }
    }
}
