import CordonSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon the benchmark starts with `posix_spawn`: default dispositions for SIGTERM, SIGINT and
/// SIGPIPE and an empty signal mask, so that `stop`'s SIGTERM ends it (Foundation's `Process`
/// passes on the blocked mask of the thread that starts it, and a daemon started that way may
/// ignore SIGTERM). Its standard input is `/dev/null` or a pipe given `input` then closed; its
/// output goes to a file (or `/dev/null`); no other descriptor of ours reaches it.
final class SpawnedProcess {
    let pid: pid_t
    let executable: String
    private var reaped = false
    /// The exit status once reaped (128 + the signal when a signal ended it).
    private(set) var exitStatus: Int32?

    /// Starts `executable` (a path) with `arguments` and exactly `environment`.
    init(
        executable: String, arguments: [String], environment: [String: String], input: [UInt8]? = nil,
        output: String? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw PeerError("\(executable) not found")
        }
        var pipeDescriptors: [Int32] = [-1, -1]
        if input != nil {
            guard pipe(&pipeDescriptors) == 0 else { throw BenchError.system("pipe", errno) }
            for descriptor in pipeDescriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        defer { if pipeDescriptors[0] >= 0 { close(pipeDescriptors[0]) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, pipeDescriptors[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        try SpawnDescriptors.closeAllButStandard(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var argvNull: [UnsafeMutablePointer<CChar>?] = argv + [nil]
        var envpNull: [UnsafeMutablePointer<CChar>?] = envp + [nil]
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, &argvNull, &envpNull)
        if let input {
            close(pipeDescriptors[0])
            pipeDescriptors[0] = -1
            let written = input.withUnsafeBytes { write(pipeDescriptors[1], $0.baseAddress, $0.count) }
            let failure = errno
            close(pipeDescriptors[1])
            if rc == 0, written != input.count {
                kill(child, SIGKILL)
                _ = waitpid(child, nil, 0)
                throw BenchError.system("writing to \(executable)'s standard input", failure)
            }
        }
        guard rc == 0 else { throw BenchError.system("posix_spawn \(executable)", rc) }
        pid = child
        self.executable = executable
    }

    /// Whether it has not exited yet (reaps it when it has).
    var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { record(status) }
        return !reaped
    }

    /// Waits until it exits; its exit status (128 + the signal when a signal ended it).
    func waitForExit() -> Int32 {
        guard !reaped else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        record(status)
        return exitStatus ?? -1
    }

    private func record(_ status: Int32) {
        reaped = true
        exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// SIGTERM, then SIGKILL when it has not exited within `grace` seconds; reaps it.
    func stop(grace: Double = 2) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning, Date() < deadline { usleep(10000) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            record(status)
        }
    }

    /// Waits up to `timeout` seconds until `ready` is true, failing early when the process exits.
    func wait(upTo timeout: Double, what: String, every interval: Double = 0.01, until ready: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !ready() {
            guard isRunning else {
                throw PeerError("\(executable) exited (status \(exitStatus ?? -1)) before \(what)")
            }
            guard Date() < deadline else { throw PeerError("\(executable): no \(what) after \(timeout) s") }
            usleep(UInt32(interval * 1_000_000))
        }
    }
}
