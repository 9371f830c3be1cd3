import CordonLocking
import CordonSystem
import Foundation

/// The implicit-unlock prompt as `UnlockPromptComponent` runs it: spawned with only the
/// descriptors meant for it (`SpawnDescriptors`), its standard error on a pipe, and, when the
/// prompt program was opened as an admin input (`AdminPath`), executed through that descriptor
/// (placed at 3, run as `/proc/self/fd/3`, as `fexecve` does) so what runs is what was checked
/// (docs/ARCHITECTURE.md, "A policy file, from disk to a decision").
final class PromptProcess: Sendable {
    /// The prompt's process id.
    let pid: pid_t
    /// The read end of its standard error.
    private let errors: Int32
    /// Set once it was reaped: its pid may then be another process's.
    private let reaped = Locked(false)

    private init(pid: pid_t, errors: Int32) {
        self.pid = pid
        self.errors = errors
    }

    /// Starts `path` (or the file open as `program`, when given) with `arguments` and
    /// `environment`; its standard input is `input` (else /dev/null), its output /dev/null.
    static func start(
        path: String, program: AdminPath?, arguments: [String], environment: [String: String], input: Int32?
    ) throws(SystemError) -> PromptProcess {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError(operation: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(ends[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], STDERR_FILENO)
        if let program { posix_spawn_file_actions_adddup2(&actions, program.descriptor, 3) }
        do {
            try SpawnDescriptors.closeAll(from: program == nil ? 3 : 4, &actions)
        } catch {
            close(ends[0])
            throw error as? SystemError ?? SystemError(operation: "posix_spawn_file_actions", errno: EINVAL)
        }
        // Default dispositions and no blocked signal: the agent ignores the signals it handles.
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
        let executable = program == nil ? path : "/proc/self/fd/3"
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            close(ends[0])
            throw SystemError(operation: "posix_spawn \(path)", errno: result)
        }
        return PromptProcess(pid: pid, errors: ends[0])
    }

    /// Reads its standard error to the end and reaps it on a thread of its own, then calls
    /// `ended` with its exit status (the signal's number when a signal ended it) and what it wrote.
    func whenEnded(_ ended: @escaping @Sendable (Int32, Data) -> Void) {
        let (pid, errors) = (self.pid, self.errors)
        let waiter = Thread { [self] in
            var output = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                if output.count < 65_536 { output.append(contentsOf: buffer[..<count]) }
            }
            close(errors)
            var status: Int32 = 0
            reaped.withLock { isReaped in
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                isReaped = true
            }
            ended((status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f, output)
        }
        waiter.name = "cordon-prompt"
        waiter.start()
    }

    /// Asks it to end (`SIGTERM`).
    func terminate() {
        reaped.withLock { isReaped in
            if !isReaped { kill(pid, SIGTERM) }
        }
    }
}
