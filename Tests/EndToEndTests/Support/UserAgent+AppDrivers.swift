import CordonLocking
import Foundation
import Synchronization
import Testing

/// Apps the test drives one step at a time, each a Python varlink program of its own run as the
/// user (``UserAppProcess``), started when it registers: a program registers once and then hardens
/// itself, as CordonKit does, and the agent registers no process that is already hardened.
/// Commands name the app they are for (`name`); one without a name goes to a program that
/// registered nothing.
final class UserApps: Sendable {
    let agent: UserAgent
    private let processes = Locked<[String: UserAppProcess]>([:])

    init(_ agent: UserAgent) { self.agent = agent }

    /// The program of `name` (started now if it has none; unnamed: one that registers nothing).
    func process(_ name: String?) throws -> UserAppProcess {
        let key = name ?? ""
        if let existing = processes.withLock({ $0[key] }) { return existing }
        let started = try UserAppProcess(agent)
        processes.withLock { $0[key] = started }
        return started
    }

    /// Sends `command` to the program of its `name` and returns the answer.
    @discardableResult
    func send(_ command: [String: Any]) async throws -> [String: Any] {
        try await process(command["name"] as? String).send(command)
    }

    /// Registers `appId` as `name` (and hardens its program); throws unless the agent accepted it.
    @discardableResult
    func register(_ name: String, appId: String) async throws -> [String: Any] {
        let reply = try await send(["op": "register", "name": name, "appId": appId])
        try #require(reply["error"] == nil, "Register \(appId): \(reply)")
        return reply
    }

    /// Calls `method` on `name`'s connection (a fresh, unregistered one without a name).
    @discardableResult
    func call(_ name: String?, _ method: String, _ parameters: [String: Any] = [:]) async throws -> [String: Any] {
        var command: [String: Any] = ["op": "call", "method": method, "parameters": parameters]
        if let name { command["name"] = name }
        return try await send(command)
    }

    /// Kills every program.
    func stop() {
        for process in processes.withLock({ Array($0.values) }) { process.stop() }
    }
}

/// One app program the test drives (``UserApps``): a Python varlink program run as the user,
/// holding the registrations it made, each on a connection of its own it opened itself, and doing
/// what each JSON line on its stdin says; it answers each with one JSON line. It hardens itself
/// (``AttackScript/prelude``'s `harden()`) once it has registered, as CordonKit does, so its apps
/// may have keys and data.
///
/// Commands (`name` names a registration; without one, a fresh connection that registered nothing):
/// - `register` (`name`, `appId`, optional `pid`): the `Register` reply;
/// - `call` (`name`, `method`, `parameters`): the reply, on the registration's connection;
/// - `own` (`name`, `method`, `parameters`): the reply, on a fresh connection, with the
///   registration's token added to the parameters (as CordonKit sends `RequestUnlock`);
/// - `start` (`id`, and what `own` takes): `own` on a thread of its own; `result` (`id`) answers
///   `{"done": …, "reply": …}`;
/// - `subscribe` (`name`): subscribes on a connection of its own, collecting events on a thread;
///   `events` (`name`) answers `{"events": [the event objects so far]}`;
/// - `close` (`name`): closes the registration's connections;
/// - `exec` (`code`): runs Python with the registrations in `apps` (`apps[name]["control"]`,
///   `["token"]`) and answers the dictionary it leaves in `out`.
final class UserAppProcess: Sendable {
    let command: SpawnedCommand
    let errorPath: String
    private let replies = Locked<[String]>([])
    private let sent = Locked(0)
    private let stopped = Locked(false)

    static let driver = """
        import threading
        apps, results, hardened = {}, {}, [False]
        def send_more(s, method, parameters):
            s.sendall(json.dumps({"method": method, "parameters": parameters, "more": True}).encode() + b"\\0")
        def follow(s, events):
            data = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
                while b"\\0" in data:
                    frame, data = data.split(b"\\0", 1)
                    reply = json.loads(frame)
                    events.append(reply.get("parameters", {}).get("event") or {"error": reply.get("error")})
            events.append({"closed": True})
        def own(command):
            s = connect(sys.argv[1])
            parameters = dict(command.get("parameters") or {})
            if command.get("name"):
                parameters["token"] = apps[command["name"]]["token"]
            reply = call(s, command["method"], parameters)
            s.close()
            return reply
        for line in sys.stdin:
            command = json.loads(line)
            op, name = command["op"], command.get("name")
            try:
                if op == "register":
                    s = connect(sys.argv[1])
                    parameters = {"appId": command["appId"]}
                    if command.get("pid"):
                        parameters["pid"] = command["pid"]
                    out = call(s, "io.cordon.App.Register", parameters)
                    if not error(out):
                        apps[name] = {"control": s, "token": out["parameters"]["token"], "events": []}
                        if not hardened[0]:
                            harden()
                            hardened[0] = True
                elif op == "call":
                    s = apps[name]["control"] if name else connect(sys.argv[1])
                    out = call(s, command["method"], command.get("parameters") or {})
                    if not name:
                        s.close()
                elif op == "own":
                    out = own(command)
                elif op == "start":
                    def run(command=command):
                        results[command["id"]] = own(command)
                    threading.Thread(target=run, daemon=True).start()
                    out = {"started": command["id"]}
                elif op == "result":
                    out = {"done": command["id"] in results, "reply": results.get(command["id"])}
                elif op == "subscribe":
                    s = connect(sys.argv[1])
                    apps[name]["subscription"] = s
                    send_more(s, "io.cordon.App.Subscribe", {"token": apps[name]["token"]})
                    threading.Thread(target=follow, args=(s, apps[name]["events"]), daemon=True).start()
                    out = {"subscribed": name}
                elif op == "events":
                    out = {"events": list(apps[name]["events"])}
                elif op == "close":
                    app = apps.pop(name)
                    for key in ("subscription", "control"):
                        if key in app:
                            try:
                                app[key].shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                            app[key].close()
                    out = {"closed": name}
                elif op == "exec":
                    scope = {"apps": apps, "out": {}}
                    exec(command["code"], globals(), scope)
                    out = scope["out"]
                else:
                    out = {"exception": "unknown op " + op}
            except Exception as failure:
                out = {"exception": repr(failure)}
            print(json.dumps(out), flush=True)
        """

    /// Starts the driver as the user against `agent`'s socket.
    init(_ agent: UserAgent) throws {
        let script = agent.home.appending("apps-\(UUID().uuidString.prefix(6)).py")
        try (AttackScript.prelude + "\n" + Self.driver).write(toFile: script, atomically: true, encoding: .utf8)
        errorPath = agent.home.appending("apps-\(UUID().uuidString.prefix(6)).err")
        let arguments =
            UserAgent.asUser + [
                "/bin/sh", "-c", "exec \"$0\" \"$@\" 2> \"\(errorPath)\"", UserAgent.python, script, agent.socketPath,
            ]
        command = try SpawnedCommand(
            path: arguments[0], arguments: Array(arguments.dropFirst()),
            environment: agent.userEnvironment.merging(["PYTHONHOME": "/usr"]) { $1 })
        // The reader closes stdout once the program has ended (its handle owns the descriptor).
        readLines(from: FileHandle(fileDescriptor: command.stdout, closeOnDealloc: true)) { [self] line in
            replies.withLock { $0.append(line) }
        }
    }

    /// The driver's pid (that of every app it registered).
    var pid: Int32 { command.pid }

    /// Sends `command` and returns the driver's answer.
    @discardableResult
    func send(_ command: [String: Any]) async throws -> [String: Any] {
        let index = sent.withLock { count in
            defer { count += 1 }
            return count
        }
        var line = try JSONSerialization.data(withJSONObject: command)
        line.append(UInt8(ascii: "\n"))
        try FileHandle(fileDescriptor: self.command.stdin, closeOnDealloc: false).write(contentsOf: line)
        var answer: String?
        try await eventually("the apps answer \(command["op"] ?? "")") {
            answer = replies.withLock { $0.count > index ? $0[index] : nil }
            return answer != nil
        }
        let object = try JSONSerialization.jsonObject(with: Data((answer ?? "").utf8)) as? [String: Any]
        let reply = try #require(object, "the apps answered \(answer ?? "")")
        try #require(reply["exception"] == nil, "the apps failed: \(reply) \(stderr)")
        return reply
    }

    /// What the driver wrote to its stderr.
    var stderr: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Kills the driver and reaps it (once).
    func stop() {
        guard
            !stopped.withLock({ stopped in
                defer { stopped = true }; return stopped
            })
        else { return }
        kill(command.pid, SIGKILL)
        var status: Int32 = 0
        waitpid(command.pid, &status, 0)
        close(command.stdin)
        close(command.stderr)
    }
}

/// The error of a varlink reply (`nil` when it succeeded).
func varlinkError(_ reply: [String: Any]) -> String? { reply["error"] as? String }

/// The parameters of a varlink reply.
func varlinkParameters(_ reply: [String: Any]) -> [String: Any] { reply["parameters"] as? [String: Any] ?? [:] }

extension UserAgent {
    /// The apps of ``UserApps``, each started as the user when it registers (stop them with `stop()`).
    func startApps() throws -> UserApps { UserApps(self) }

    /// Runs `cordon ARGUMENTS` as the user and requires it to succeed.
    @discardableResult
    func cliSucceeds(_ arguments: [String], input: String? = nil) async throws -> CommandResult {
        let result = try await cli(arguments, input: input)
        try #require(result.status == 0, "cordon \(arguments.joined(separator: " ")): \(result.stderr)")
        return result
    }

    /// Unlocks with ``passcode`` through the CLI.
    func unlock() async throws { try await cliSucceeds(["unlock", "--passcode-stdin"], input: Self.passcode + "\n") }

    /// The audit records (`cordon audit --json`), optionally of one app.
    func audit(appId: String? = nil) async throws -> [[String: Any]] {
        let result = try await cliSucceeds(
            ["audit", "--json", "--limit", "1000"] + (appId.map { ["--app", $0] } ?? []))
        return result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Writes `text` as root's admin policy file `name` and has the agent reload (`cordon policy reload`).
    func applyAdminPolicy(_ text: String, name: String = "10-apps.json") async throws {
        try text.replacingOccurrences(of: "$SYSTEM", with: system.path)
            .write(toFile: system.appending("admin/" + name), atomically: true, encoding: .utf8)
        try await cliSucceeds(["policy", "reload"])
    }
}

extension UserAgent {
    /// Follows the agent's events as the user (`cordon events --follow --json`, the snapshot
    /// first); ``EventFollower/stop()`` ends it.
    func followEvents() throws -> EventFollower {
        let reader = try LineReader(
            URL(fileURLWithPath: Self.asUser[0]),
            Array(Self.asUser.dropFirst()) + [Binaries.cordon.path, "events", "--follow", "--json"],
            environment: userEnvironment)
        return EventFollower(reader: reader)
    }
}

/// `cordon events --follow --json` run as the user, read in order: ``next(_:)`` waits for the next
/// event after those already taken.
final class EventFollower: Sendable {
    let reader: LineReader
    private let taken = Locked(0)

    init(reader: LineReader) { self.reader = reader }

    /// Every event printed so far.
    var events: [[String: Any]] {
        reader.snapshot.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits for the next event not yet taken, takes it and returns it.
    func next(_ what: String = "the next event") async throws -> [String: Any] {
        var event: [String: Any]?
        try await eventually(what) {
            let all = events
            let index = taken.withLock { $0 }
            event = index < all.count ? all[index] : nil
            return event != nil
        }
        taken.withLock { $0 += 1 }
        return event ?? [:]
    }

    func stop() { reader.stop() }
}
