import CordonProtocol
import CordonSystem
import Foundation

/// The program `cordon run` wraps: started in a process group of its own — and, where a cgroup v2
/// subtree is delegated to the user, in a cgroup of its own —, frozen and thawed as a whole, and
/// reaped by us (so its PID and PGID cannot be recycled while we signal them).
///
/// In a cgroup, freezing is `cgroup.freeze` (children and `setsid` escapes too, and a SIGCONT
/// does not thaw it), killing is `cgroup.kill`, and what the program leaves behind when it exits
/// is killed and the cgroup removed (docs/ARCHITECTURE.md, "Freezing").
final class WrappedProgram: @unchecked Sendable {
    let pid: pid_t
    /// The program's own cgroup, or nil: signals to its process group.
    let cgroup: Cgroup?
    private let lock = NSLock()
    private var frozen = false
    private var exited = false
    private var pendingTerminations = 0
    private var terminalGiven = false

    /// Starts `arguments` (looked up on `PATH`) with `environment` in a new process group, with
    /// default signal dispositions and an empty signal mask, and only stdin, stdout and stderr
    /// of cordon's descriptors (never a connection to cordond); born in `cgroup`, created here,
    /// when given.
    init(arguments: [String], environment: [String: String], cgroup: Cgroup? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        do {
            try SpawnDescriptors.closeAllButStandard(&actions)
        } catch {
            throw ErrorText("cannot start \(arguments[0]): \(error)", hint: "this is a fault of the system: try again")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var argvNull: [UnsafeMutablePointer<CChar>?] = argv + [nil]
        var envpNull: [UnsafeMutablePointer<CChar>?] = envp + [nil]
        var child: pid_t = 0
        // glibc's posix_spawn returns once the child has called exec (or failed to).
        let spawn = { posix_spawnp(&child, arguments[0], &actions, &attributes, &argvNull, &envpNull) }
        let result: Int32
        if let cgroup {
            do {
                try cgroup.create()
                result = try cgroup.hostingChildren(spawn)
            } catch {
                if child > 0 { kill(-child, SIGKILL) }
                try? cgroup.remove()
                throw ErrorText(
                    "cannot start the program in the cgroup \(cgroup.directory): \(error)",
                    hint: "pass --cgroup-parent none (or set CORDON_CGROUP_PARENT=none) to freeze it with signals",
                    exit: .usage)
            }
        } else {
            result = spawn()
        }
        guard result == 0 else {
            try? cgroup?.remove()
            throw ErrorText(
                "cannot start \(arguments[0]): \(String(cString: strerror(result)))",
                hint: "check the program's name and PATH", exit: .usage)
        }
        pid = child
        self.cgroup = cgroup
    }

    /// Whether the group is frozen.
    var isFrozen: Bool { lock.withLock { frozen } }

    /// Freezes its cgroup and waits until the freeze took effect (`cgroup.events`: `frozen 1`),
    /// or SIGSTOP to the whole group.
    func freeze() {
        lock.withLock {
            guard !exited, !frozen else { return }
            if let cgroup {
                try? cgroup.setFrozen(true)
                _ = cgroup.waitForEvents(timeout: .seconds(2)) { $0.frozen || !$0.populated }
            } else {
                kill(-pid, SIGSTOP)
            }
            frozen = true
        }
    }

    /// Thaws its cgroup, or SIGCONT to the whole group.
    func thaw() {
        lock.withLock {
            guard !exited, frozen else { return }
            if let cgroup { try? cgroup.setFrozen(false) } else { kill(-pid, SIGCONT) }
            frozen = false
        }
    }

    /// Forwards `signal` to the group. A second SIGINT or SIGTERM while frozen kills the group
    /// (a frozen program cannot act on the first). Returns a note for the user, if any.
    func forward(_ signal: Int32) -> String? {
        lock.withLock {
            guard !exited else { return nil }
            kill(-pid, signal)
            guard frozen, signal == SIGINT || signal == SIGTERM else { return nil }
            pendingTerminations += 1
            if pendingTerminations >= 2 {
                try? cgroup?.kill()
                kill(-pid, SIGKILL)
                return "cordon: the program was frozen: killed it"
            }
            return "cordon: the program is frozen until the container unlocks; it gets the signal then "
                + "(send it again to kill it now)"
        }
    }

    /// Thaws and kills the group (cleanup when `cordon run` cannot go on).
    func terminate() {
        lock.withLock {
            guard !exited else { return }
            try? cgroup?.kill()
            kill(-pid, SIGKILL)
            kill(-pid, SIGCONT)
        }
    }

    /// Once the program has exited: kills what it left in its cgroup (its registration ends with
    /// `cordon run`, so nothing would freeze them any more) and removes the cgroup; a failure is
    /// told to `note`.
    func removeCgroup(note: RunNote) {
        guard let cgroup, cgroup.exists else { return }
        if cgroup.events()?.populated == true {
            try? cgroup.kill()
            _ = cgroup.waitForEvents(timeout: .seconds(5)) { !$0.populated }
        }
        do {
            try cgroup.remove()
        } catch {
            note("cordon: could not remove the program's cgroup \(cgroup.directory): \(error)")
        }
    }

    /// Makes the program's group the terminal's foreground group when `cordon run` has the terminal.
    func takeTerminal() {
        guard isatty(STDIN_FILENO) == 1, tcgetpgrp(STDIN_FILENO) == getpgrp() else { return }
        let previous = signal(SIGTTOU, SIG_IGN)
        if tcsetpgrp(STDIN_FILENO, pid) == 0 { terminalGiven = true }
        signal(SIGTTOU, previous)
    }

    /// Gives the terminal back to `cordon run`'s group.
    func returnTerminal() {
        guard terminalGiven else { return }
        let previous = signal(SIGTTOU, SIG_IGN)
        tcsetpgrp(STDIN_FILENO, getpgrp())
        signal(SIGTTOU, previous)
        terminalGiven = false
    }

    /// Waits for the program to exit; returns its exit code, 128 + signal when a signal ended it.
    func waitForExit() async -> Int32 {
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let thread = Thread { [self] in
                // Wait without reaping, stop signalling, then reap: the PID and PGID stay ours
                // until no signal can be sent to them any more.
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
                lock.withLock { exited = true }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status)
            }
            thread.start()
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
