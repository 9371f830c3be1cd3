import CordonProtocol
import CordonSystem
import Foundation

/// The child process: spawning, bounded reads and writes, and reaping.
extension PinentrySession {
    /// Starts the program with its stdin and stdout on pipes and its stderr on /dev/null, and
    /// no other descriptor (not the connection to cordond).
    func spawn() throws {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard Self.makePipe(&toChild) else { throw Self.failure("cannot create a pipe for pinentry") }
        guard Self.makePipe(&fromChild) else {
            Foundation.close(toChild[0])
            Foundation.close(toChild[1])
            throw Self.failure("cannot create a pipe for pinentry")
        }
        defer {
            Foundation.close(toChild[0])
            Foundation.close(fromChild[1])
        }
        input = toChild[1]
        output = fromChild[0]
        // A pinentry that exits early must give EPIPE, not kill cordon.
        previousPipeHandler = signal(SIGPIPE, SIG_IGN)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        // A pinentry cordond opened and checked runs through its descriptor (as fexecve does):
        // placed at 3 and executed as /proc/self/fd/3, so what runs is the file checked, not
        // whatever its name means now. It stays open for an interpreter to read a script by.
        let executable = program.descriptor == nil ? program.path : "/proc/self/fd/3"
        if let descriptor = program.descriptor { posix_spawn_file_actions_adddup2(&actions, descriptor, 3) }
        do {
            try SpawnDescriptors.closeAll(from: program.descriptor == nil ? 3 : 4, &actions)
        } catch {
            throw Self.failure("cannot start pinentry \(program.path): \(error)")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let arguments = [strdup(program.path)]
        defer { for argument in arguments { free(argument) } }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments + [nil]
        var child: pid_t = 0
        var result = posix_spawn(&child, executable, &actions, &attributes, &argv, environ)
        // ETXTBSY is transient: the program was just written, and a process forked meanwhile still
        // holds the writer's descriptor until it execs. Try again briefly before giving up.
        var tries = 1
        while result == ETXTBSY && tries < 50 {
            usleep(10_000)
            tries += 1
            result = posix_spawn(&child, executable, &actions, &attributes, &argv, environ)
        }
        guard result == 0 else {
            throw Self.failure("cannot start pinentry \(program.path): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// A pipe whose ends close on exec (the child gets its ends through dup2).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Writes `line` to pinentry's stdin.
    func send(_ line: String) throws {
        var bytes = Array(line.utf8)
        defer { explicit_bzero(&bytes, bytes.count) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Foundation.write(input, $0.baseAddress?.advanced(by: offset), $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Self.failure("pinentry exited before the dialogue ended") }
            offset += written
        }
    }

    /// Reads until `pending` holds a whole line; returns its length (without the newline).
    func nextLine() throws -> Int {
        while true {
            if let newline = pending[0..<pendingCount].firstIndex(of: 10) { return newline }
            guard pendingCount < pending.count else { throw Self.failure("pinentry sent a line that is too long") }
            let remaining = (deadline - .now).components
            let milliseconds = remaining.seconds * 1000 + remaining.attoseconds / 1_000_000_000_000_000
            guard milliseconds > 0 else {
                throw Self.failure("pinentry did not finish within \(ErrorText.seconds(timeoutSeconds))")
            }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: milliseconds))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let free = pending.count - pendingCount
            let count = Foundation.read(output, pending.baseAddress?.advanced(by: pendingCount), free)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Self.failure("pinentry exited before answering") }
            totalReceived += count
            guard totalReceived <= Self.maxResponseBytes else {
                throw Self.failure("pinentry sent more than \(Self.maxResponseBytes / 1024) KiB")
            }
            pendingCount += count
        }
    }

    /// Drops the line of `length` bytes and its newline from `pending`, zeroing what it held.
    func consumeLine(_ length: Int) {
        guard let base = pending.baseAddress else { return }
        let used = min(length + 1, pendingCount)
        let rest = pendingCount - used
        if rest > 0 { memmove(base, base + used, rest) }
        explicit_bzero(base + rest, pending.count - rest)
        pendingCount = rest
    }

    /// Ends the dialogue (with `BYE` when `politely`) and reaps the child, killing it if it lingers.
    func close(politely: Bool = true) {
        guard pid > 0 || input >= 0 else { return }
        if politely && input >= 0 { try? send("BYE\n") }
        if input >= 0 { Foundation.close(input) }
        if output >= 0 { Foundation.close(output) }
        input = -1
        output = -1
        if pid > 0 {
            if !politely || !waitForExit(milliseconds: 1000) {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            }
            pid = 0
        }
        if let handler = previousPipeHandler {
            signal(SIGPIPE, handler)
            previousPipeHandler = nil
        }
    }

    /// Whether the child exits by itself within `milliseconds` (it is reaped if so).
    private func waitForExit(milliseconds: Int) -> Bool {
        var status: Int32 = 0
        for _ in 0..<(milliseconds / 10) {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) { return true }
            usleep(10_000)
        }
        return false
    }
}
