import CCordonBench
import Foundation

/// One blocking varlink connection to the agent: NUL-terminated JSON calls and replies.
final class VarlinkConnection {
    let descriptor: Int32
    private var buffer = [CChar](repeating: 0, count: 65536)

    /// Connects to the agent's socket at `path`.
    init(path: String) throws {
        descriptor = try Int32(FanoutError.check("connect(\(path))", ccb_unix_connect(path)))
    }

    /// Sends one message (the NUL is added).
    func send(_ message: String) throws {
        let bytes = Array(message.utf8) + [0]
        try bytes.withUnsafeBytes { raw in
            _ = try FanoutError.check("write", ccb_write_all(descriptor, raw.baseAddress, raw.count))
        }
    }

    /// Reads one reply; nothing may follow it on the socket yet.
    func receive() throws -> String {
        let capacity = buffer.count
        let length = try buffer.withUnsafeMutableBufferPointer { raw in
            try FanoutError.check("read", ccb_read_message(descriptor, raw.baseAddress, capacity))
        }
        return String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `method` and returns the reply's parameters; a varlink error throws.
    @discardableResult
    func call(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        try send(Self.encode(method: method, parameters: parameters, more: false))
        let reply = try Self.decode(try receive())
        if let error = reply["error"] as? String { throw FanoutError.agent("\(method): \(error)") }
        return reply["parameters"] as? [String: Any] ?? [:]
    }

    /// A call's JSON text.
    static func encode(method: String, parameters: [String: Any], more: Bool) throws -> String {
        var call: [String: Any] = ["method": method, "parameters": parameters]
        if more { call["more"] = true }
        return String(decoding: try JSONSerialization.data(withJSONObject: call), as: UTF8.self)
    }

    /// A reply's JSON object.
    static func decode(_ text: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw FanoutError.agent("a reply that is not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    deinit { close(descriptor) }
}
