import Foundation
import Glibc

/// The ways a misbehaving client abuses the agent's socket.
enum GarbageKind: Int, CaseIterable, Sendable {
    /// Random bytes ending in a NUL: not JSON (`InvalidMessage`, then close).
    case randomBytes
    /// Half a call, then the client shuts down its side: the agent drops the fragment.
    case truncatedThenEOF
    /// 70 KB without a NUL: over the 64 KiB limit (`MessageTooLarge`, then close).
    case oversized
    /// JSON that is not a varlink call (`InvalidMessage`, then close).
    case notACall
    /// Half a call, then silence: holds a connection open until the test ends.
    case truncatedThenSilent
    /// An unknown method (answered, connection kept), then junk (`InvalidMessage`, then close).
    case unknownMethodThenJunk

    /// Whether the agent ends the connection by itself.
    var agentCloses: Bool { self != .truncatedThenSilent }

    /// Sends this abuse on `socket`.
    func send(on socket: RawVarlinkSocket) throws {
        let half = Array(#"{"method":"io.cordon.Agent.GetStatus","param"#.utf8)
        switch self {
        case .randomBytes:
            var bytes = (0..<200).map { _ in UInt8.random(in: 1...255) }
            bytes.append(0)
            try socket.send(bytes)
        case .truncatedThenEOF:
            try socket.send(half)
            shutdown(socket.fd, Int32(SHUT_WR))
        case .oversized:
            try socket.send([UInt8](repeating: UInt8(ascii: "a"), count: 70_000))
        case .notACall:
            try socket.send(json: #"{"hello": [1, 2, 3], "method": 42}"#)
        case .truncatedThenSilent:
            try socket.send(half)
        case .unknownMethodThenJunk:
            try socket.send(json: #"{"method":"io.cordon.Agent.NoSuchMethod"}"#)
            try socket.send(Array("\u{1}\u{2}not json at all".utf8) + [0])
        }
    }
}

/// Connections that each abuse the agent in one `GarbageKind`, reconnecting for `rounds`
/// rounds, on a thread of their own. Records what the agent answered (error names).
final class GarbageSpray: @unchecked Sendable {
    private let path: String
    private let kinds: [GarbageKind]
    private var sockets: [RawVarlinkSocket?]
    private(set) var answers: [String: Int] = [:]
    private(set) var failures: [String] = []

    /// Connects one socket per kind in `kinds` as the test user (held open until `run` ends).
    init(path: String, kinds: [GarbageKind]) throws {
        self.path = path
        self.kinds = kinds
        sockets = try kinds.map { _ in try RawVarlinkSocket(userPath: path) }
    }

    /// Abuses every connection `rounds` times, reconnecting those the agent closed. A send the
    /// agent cut short counts as an answer (`sendFailed`); only a failed connect is a failure.
    func run(rounds: Int) {
        var silent = Set<Int>()
        for _ in 0..<rounds {
            for (index, kind) in kinds.enumerated() where !silent.contains(index) {
                let socket: RawVarlinkSocket
                do {
                    socket = try sockets[index] ?? RawVarlinkSocket(userPath: path)
                } catch {
                    failures.append("\(kind): \(error)")
                    continue
                }
                sockets[index] = socket
                do {
                    try kind.send(on: socket)
                } catch {
                    answers["sendFailed", default: 0] += 1
                }
                guard kind.agentCloses else {
                    silent.insert(index)  // It stays open and silent until the end.
                    answers["silent", default: 0] += 1
                    continue
                }
                for reply in socket.drainUntilClosed(timeout: 120) {
                    answers[varlinkErrorName(reply) ?? "reply", default: 0] += 1
                }
                sockets[index] = nil
            }
        }
    }

    /// Closes the connections still open.
    func close() { sockets = [] }
}
