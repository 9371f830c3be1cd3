import CCordonBench
import Foundation

/// Connections to the agent held open by one process: plain observers (`Subscribe` without a
/// token) or apps (`Register` on one connection, `Subscribe` with its token on a second).
final class SocketSet {
    /// The streaming connections, each past its `State` snapshot.
    private(set) var subscriptions: [VarlinkConnection] = []
    /// The registration connections (apps only): an app lives as long as its connection.
    private(set) var registrations: [VarlinkConnection] = []

    /// `count` observers on `socket`.
    static func observers(socket: String, count: Int) throws -> SocketSet {
        let set = SocketSet()
        let subscribe = try VarlinkConnection.encode(method: "io.cordon.App.Subscribe", parameters: [:], more: true)
        for _ in 0..<count {
            set.subscriptions.append(try subscribed(socket: socket, call: subscribe))
        }
        return set
    }

    /// `count` apps `com.example.app0` … each registered and subscribed with its token.
    static func apps(socket: String, count: Int) throws -> SocketSet {
        let set = SocketSet()
        for index in 0..<count {
            let registration = try VarlinkConnection(path: socket)
            let reply = try registration.call("io.cordon.App.Register", ["appId": "com.example.app\(index)"])
            guard let token = reply["token"] as? String else { throw FanoutError.agent("Register: no token") }
            set.registrations.append(registration)
            let subscribe = try VarlinkConnection.encode(
                method: "io.cordon.App.Subscribe", parameters: ["token": token], more: true)
            set.subscriptions.append(try subscribed(socket: socket, call: subscribe))
        }
        return set
    }

    /// The subscriptions' descriptors, for one epoll loop.
    var descriptors: [Int32] { subscriptions.map(\.descriptor) }

    /// Connects, sends `call` (a Subscribe) and reads the `State` snapshot.
    private static func subscribed(socket: String, call: String) throws -> VarlinkConnection {
        let connection = try VarlinkConnection(path: socket)
        try connection.send(call)
        let snapshot = try connection.receive()
        guard snapshot.contains("\"State\"") else {
            throw FanoutError.agent("Subscribe: expected a State snapshot, got \(snapshot.prefix(200))")
        }
        return connection
    }
}
