import CordonLocking
import Foundation
import Synchronization

/// A wrapped app written against the raw varlink protocol (Python), to play apps that behave
/// or misbehave: it registers, subscribes, prints every event kind, and acknowledges
/// revocations only in `polite` mode. In `parent` mode it starts a child (`sleep`) and registers
/// on the child's behalf, then on the line `reap` on stdin kills and reaps that child.
final class ScriptedApp: Sendable {
    enum Mode: String {
        case deaf, polite, parent
    }

    let directory: TemporaryDirectory
    let process: Process
    let input: Pipe
    let output: LineReaderBuffer

    /// `interpreter` runs the script instead of `python3` from `PATH`: a Python interpreter,
    /// possibly behind `setpriv` (``UserAgent/asUser``), which must exec it (the app's pid is the
    /// process's).
    init(socket: String, appId: String, mode: Mode, interpreter: [String] = ["/usr/bin/env", "python3"]) throws {
        directory = try TemporaryDirectory()
        let script = directory.appending("app.py")
        try Self.source.write(toFile: script, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter[0])
        process.arguments = Array(interpreter.dropFirst()) + [script, socket, appId, mode.rawValue]
        input = Pipe()
        process.standardInput = input
        output = try LineReaderBuffer(process)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The lines printed so far (event kinds, `child PID`, `reaped`, errors).
    var lines: [String] { output.snapshot }

    /// Waits until the app printed `line`.
    func waitFor(_ line: String) async throws {
        try await eventually("the app prints \(line)") {
            if !process.isRunning && !lines.contains(line) { throw CocoaError(.executableLoad) }
            return lines.contains(line)
        }
    }

    /// Sends a line to the app's stdin.
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Kills the app (and thaws it first, in case it is frozen) and removes its directory.
    func cleanUp() {
        if process.isRunning {
            kill(pid, SIGKILL)
            kill(pid, SIGCONT)
            process.waitUntilExit()
        }
        directory.remove()
    }

    static let source = #"""
        import json, os, signal, socket, subprocess, sys
        # The test runner blocks signals; a real app would not.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        path, app, mode = sys.argv[1], sys.argv[2], sys.argv[3]
        buffers = {}
        def connect():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        def call(s, method, parameters, more=False):
            message = {"method": method, "parameters": parameters}
            if more:
                message["more"] = True
            s.sendall(json.dumps(message).encode() + b"\0")
        def reply(s):
            data = buffers.get(s, b"")
            while b"\0" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    print("closed", flush=True)
                    sys.exit(3)
                data += chunk
            message, _, rest = data.partition(b"\0")
            buffers[s] = rest
            return json.loads(message)
        parameters = {"appId": app}
        child = None
        if mode == "parent":
            child = subprocess.Popen(["sleep", "1000"])
            parameters["pid"] = child.pid
            print("child %d" % child.pid, flush=True)
        control = connect()
        call(control, "io.cordon.App.Register", parameters)
        registered = reply(control)
        if "error" in registered:
            print("error " + registered["error"], flush=True)
            sys.exit(2)
        print("registered", flush=True)
        if mode == "parent":
            line = sys.stdin.readline().strip()
            if line == "reap":
                child.kill()
                child.wait()
                print("reaped", flush=True)
        subscription = connect()
        call(subscription, "io.cordon.App.Subscribe", {"token": registered["parameters"]["token"]}, more=True)
        while True:
            event = reply(subscription)["parameters"]["event"]
            print(event["kind"], flush=True)
            if mode == "polite" and event["kind"] == "EncryptionKeyUnavailable":
                call(control, "io.cordon.App.Acknowledge", {"seq": event["seq"], "status": "halted"})
                print("acknowledged %s" % ("error" not in reply(control)), flush=True)
        """#
}

/// Collects a process's stdout lines (set up before `run()`).
final class LineReaderBuffer: Sendable {
    private let lines = Locked<[String]>([])

    init(_ process: Process) throws {
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        readLines(from: pipe.fileHandleForReading) { [self] line in lines.withLock { $0.append(line) } }
    }

    var snapshot: [String] { lines.withLock { $0 } }
}
