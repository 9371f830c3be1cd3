import CCordonLinux
import CordonSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The result of running a command to completion.
struct CommandResult: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `executable` with `arguments`, feeding `input` on stdin, and waits for it.
///
/// Spawned with `posix_spawn` directly (pipes made close-on-exec, every other descriptor closed in
/// the child, default signal mask), not with Foundation's `Process`: with the many descriptors the
/// end-to-end suites hold open at once, `Process.run()` crashed copying the descriptor list.
func runCommand(
    _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]
) async throws -> CommandResult {
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    let child = try SpawnedCommand(path: executable.path, arguments: arguments, environment: env)
    // Blocking reads and waits run on Dispatch threads, never on the cooperative pool.
    return await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: child.finish(input: input.map { Array($0.utf8) }))
        }
    }
}

/// A child process with its standard input, output and error on pipes.
struct SpawnedCommand: Sendable {
    let pid: pid_t
    let stdin: Int32
    let stdout: Int32
    let stderr: Int32

    init(path: String, arguments: [String], environment: [String: String]) throws {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var fds: [Int32] = [-1, -1]
            guard cordon_pipe_cloexec(&fds) == 0 else { throw POSIXError(.EMFILE) }
            pipes.append(fds)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        try SpawnDescriptors.closeAllButStandard(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        close(pipes[0][0])
        close(pipes[1][1])
        close(pipes[2][1])
        guard result == 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT)
        }
        self.pid = pid
        stdin = pipes[0][1]
        stdout = pipes[1][0]
        stderr = pipes[2][0]
    }

    /// Writes `input` (then closes stdin), reads both outputs to their end, and reaps the child.
    func finish(input: [UInt8]?) -> CommandResult {
        let group = DispatchGroup()
        nonisolated(unsafe) var out: [UInt8] = []
        nonisolated(unsafe) var err: [UInt8] = []
        let (stdout, stderr) = (self.stdout, self.stderr)
        DispatchQueue.global().async(group: group) { out = Self.readAll(stdout) }
        DispatchQueue.global().async(group: group) { err = Self.readAll(stderr) }
        // A command may exit before reading its input: EPIPE is an error here, never a crash.
        signal(SIGPIPE, SIG_IGN)
        if let input {
            var offset = 0
            while offset < input.count {
                let count = input.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { write(stdin, $0 + offset, bytes.count - offset) } ?? 0
                }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                offset += count
            }
        }
        close(stdin)
        group.wait()
        close(stdout)
        close(stderr)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // As Process reports it: the exit code, or the signal's number.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
        return CommandResult(
            status: code, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    static func readAll(_ descriptor: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return data }
            data += buffer[..<count]
        }
    }
}
