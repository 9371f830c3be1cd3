import Foundation
import Testing

/// A wrapped app written against the raw varlink protocol (Python) and run as the user
/// (``UserAgent/startApp(_:)``): it registers, makes itself non-dumpable (as CordonKit does),
/// subscribes and prints every event it hears as `event JSON`; each line `N METHOD JSON` on its
/// standard input is a call on its registered connection, answered `reply N JSON`. It never
/// acknowledges a revocation unless told to (`io.cordon.App.Acknowledge`).
final class UserApp: Sendable {
    let appId: String
    let process: Process
    let input: Pipe
    let output: LineReaderBuffer
    private let calls = Counter()

    fileprivate init(agent: UserAgent, appId: String) throws {
        self.appId = appId
        let script = agent.home.appending("app-\(UUID().uuidString.prefix(6)).py")
        try Self.source.write(toFile: script, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: UserAgent.asUser[0])
        process.arguments = Array(UserAgent.asUser.dropFirst()) + [UserAgent.python, script, agent.socketPath, appId]
        process.environment = agent.userEnvironment.merging(["PYTHONHOME": "/usr"]) { $1 }
        input = Pipe()
        process.standardInput = input
        output = try LineReaderBuffer(process)
        try process.run()
    }

    /// Its pid (`setpriv` execs the interpreter).
    var pid: Int32 { process.processIdentifier }

    /// The lines printed so far.
    var lines: [String] { output.snapshot }

    /// The events heard so far, in order, as the agent sent them.
    var events: [[String: Any]] {
        lines.compactMap { line in
            guard line.hasPrefix("event ") else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
        }
    }

    /// Waits for the first event of `kind` heard after the first `after` events, and returns it
    /// with its index.
    @discardableResult
    func event(_ kind: String, after: Int = 0) async throws -> (index: Int, event: [String: Any]) {
        var found: (Int, [String: Any])?
        try await eventually("the app hears \(kind)") {
            if !process.isRunning { throw AppExited(lines: lines) }
            let events = self.events
            found = events.indices.dropFirst(after).first { events[$0]["kind"] as? String == kind }
                .map { ($0, events[$0]) }
            return found != nil
        }
        guard let found else { throw AppExited(lines: lines) }
        return found
    }

    /// Calls `method` on its registered connection and returns the agent's reply (`error` set
    /// when it refused, `parameters` otherwise).
    func call(_ method: String, _ parameters: [String: Any] = [:]) async throws -> [String: Any] {
        let number = calls.next()
        let body = String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self)
        try input.fileHandleForWriting.write(contentsOf: Data("\(number) \(method) \(body)\n".utf8))
        let prefix = "reply \(number) "
        var reply: [String: Any]?
        try await eventually("the app's \(method) is answered") {
            if !process.isRunning { throw AppExited(lines: lines) }
            reply = lines.first { $0.hasPrefix(prefix) }.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.dropFirst(prefix.count).utf8)) as? [String: Any]
            }
            return reply != nil
        }
        return reply ?? [:]
    }

    /// Kills it (thawing it first, in case it is stopped).
    func cleanUp() {
        if process.isRunning {
            kill(pid, SIGKILL)
            kill(pid, SIGCONT)
            process.waitUntilExit()
        }
    }

    struct AppExited: Error, CustomStringConvertible {
        let lines: [String]
        var description: String { "the app exited: \(lines)" }
    }

    /// Numbers the calls (their replies are told apart by it).
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }

    static let source = #"""
        import ctypes, json, os, select, signal, socket, sys
        # The test runner blocks signals; a real app would not.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        path, app = sys.argv[1], sys.argv[2]
        buffers = {}
        def say(*parts):
            print(" ".join(parts), flush=True)
        def connect():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        def send(s, method, parameters, more=False):
            message = {"method": method, "parameters": parameters}
            if more:
                message["more"] = True
            s.sendall(json.dumps(message).encode() + b"\0")
        def buffered(s):
            return b"\0" in buffers.get(s, b"")
        def reply(s):
            data = buffers.get(s, b"")
            while b"\0" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    say("closed")
                    sys.exit(3)
                data += chunk
            message, _, rest = data.partition(b"\0")
            buffers[s] = rest
            return json.loads(message)
        control = connect()
        send(control, "io.cordon.App.Register", {"appId": app})
        registered = reply(control)
        if "error" in registered:
            say("error", registered["error"], json.dumps(registered.get("parameters", {})))
            sys.exit(2)
        # What CordonKit does once registered: no process of this user may read its memory.
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        subscription = connect()
        send(subscription, "io.cordon.App.Subscribe", {"token": registered["parameters"]["token"]}, more=True)
        say("event", json.dumps(reply(subscription)["parameters"]["event"]))
        say("subscribed")
        pending, reading = b"", True
        while True:
            ready = [subscription] if buffered(subscription) else []
            if not ready:
                ready = select.select([subscription] + ([0] if reading else []), [], [])[0]
            if subscription in ready:
                say("event", json.dumps(reply(subscription)["parameters"]["event"]))
            if 0 in ready:
                chunk = os.read(0, 65536)
                reading = bool(chunk)
                pending += chunk
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    number, method, parameters = line.decode().split(" ", 2)
                    send(control, method, json.loads(parameters))
                    say("reply", number, json.dumps(reply(control)))
        """#
}

extension UserAgent {
    /// Starts a raw varlink app (``UserApp``) as the user, registered as `appId`, and waits until
    /// it has subscribed (its first event heard); the caller kills it (``UserApp/cleanUp()``).
    func startApp(_ appId: String) async throws -> UserApp {
        let app = try UserApp(agent: self, appId: appId)
        do {
            try await eventually("the app \(appId) subscribed") {
                if !app.process.isRunning { throw UserApp.AppExited(lines: app.lines) }
                return app.lines.contains("subscribed")
            }
        } catch {
            app.cleanUp()
            throw error
        }
        return app
    }
}

extension UserAgent {
    /// Calls `method` once from a program run as the user, on a connection of its own (an
    /// unregistered client, as the CLI is), and returns the reply: `error` set when the agent
    /// refused, `parameters` otherwise.
    func varlink(_ method: String, _ parameters: [String: Any] = [:]) async throws -> [String: Any] {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self)
        return try await attack(
            #"print(json.dumps(call(connect(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]))))"#, [method, body])
    }

    /// Calls `method` as ``varlink(_:_:)`` does and decodes the reply's `member` (the whole
    /// reply's parameters when nil) as `T`; a refusal throws.
    func varlink<T: Decodable>(
        _ method: String, _ parameters: [String: Any] = [:], _ member: String?, as type: T.Type
    ) async throws -> T {
        let reply = try await varlink(method, parameters)
        if let error = reply["error"] as? String { throw RefusedCall(method: method, error: error, reply: "\(reply)") }
        let body = try #require(reply["parameters"] as? [String: Any], "\(reply)")
        let value: Any = try member.map { try #require(body[$0], "\(reply)") } ?? body
        return try JSONDecoder().decode(
            T.self, from: try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed))
    }

    /// A call the agent refused (``varlink(_:_:_:as:)``).
    struct RefusedCall: Error, CustomStringConvertible {
        let method: String
        let error: String
        let reply: String
        var description: String { "\(method) was refused: \(error) \(reply)" }
    }
}

extension UserAgent {
    /// Starts `cordon ARGUMENTS` as the user in the background (`events --follow`, `audit
    /// --follow`), collecting its output lines; the caller kills it.
    func cliInBackground(_ arguments: [String]) throws -> (process: Process, output: LineReaderBuffer) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.asUser[0])
        process.arguments = Array(Self.asUser.dropFirst()) + [Binaries.cordon.path] + arguments
        process.environment = userEnvironment
        let output = try LineReaderBuffer(process)
        try process.run()
        return (process, output)
    }
}
