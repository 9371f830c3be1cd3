import ArgumentParser
import CCordonSenders
import CordonBenchSummary
import CordonSystem
import Foundation

/// `cordon-bench verify`: what re-verifying a registered app costs the agent on every data call
/// (docs/THREAT-MODEL.md, "App identity"), on a hardened process of an ordinary user.
///
/// The check: the owner of `stat` through the `/proc/PID` directory held since registration
/// (non-dumpable, alive) and a `poll` of the pidfd (`ProcessDirectory`, `Pidfd.hasExited`).
/// Its baseline, in the same run: the detection it replaced, `TracerPid` read from
/// `/proc/PID/status` and the executable `stat`ed through `/proc/PID/exe` (which an ordinary
/// user cannot even do on a non-dumpable process: measured here as root sees it). Both sides
/// alternate in blocks, in `runs` runs; the target is the check's median per call.
///
/// With it, what naming the writer of each message costs (docs/ARCHITECTURE.md, "Who wrote a
/// message"): a 100-byte write and its read on a Unix socket pair through the agent's own `read`
/// (`CCordonSenders`: `SO_PASSCRED`, `recvmsg`, the writer looked up), against the same on an
/// unmarked pair (the plain `read` system call), alternating in blocks.
struct VerifyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Per-call identity re-verification of a hardened app, against the detection it replaced.")

    @Option(help: "Checks timed per side and run.")
    var iterations = 20000
    @Option(help: "Runs (the spread is across runs).")
    var runs = 5
    @OptionGroup var summary: SummaryOption

    /// The target per call (issue "App identity that holds for an ordinary user").
    static let targetMicroseconds = 3.0
    /// What attributing a message may add to its write and read: a third of the budget above.
    static let attributionTargetMicroseconds = 1.0

    func run() throws {
        let child = try HardenedChild()
        defer { child.stop() }
        let directory = try require(ProcessDirectory(pid: child.pid), "no /proc directory for \(child.pid)")
        let pidfd = try require(Pidfd(pid: child.pid), "no pidfd for \(child.pid)")
        let uid = child.uid
        guard directory.dumpability(uid: uid) == .nonDumpable || uid == 0 else {
            throw ValidationError("the child did not harden itself")
        }
        var checks: [Double] = []
        var detections: [Double] = []
        for _ in 0..<runs {
            var check: [Double] = []
            var detection: [Double] = []
            for _ in 0..<(iterations / 100) {
                check.append(
                    Self.timed(100) {
                        directory.dumpability(uid: uid) == .nonDumpable && !pidfd.hasExited
                    })
                detection.append(
                    Self.timed(100) {
                        var info = stat()
                        return (ProcessInfoReader.tracerPID(of: child.pid) ?? 1) == 0
                            && stat("/proc/\(child.pid)/exe", &info) == 0
                    })
            }
            checks.append(Self.median(check))
            detections.append(Self.median(detection))
        }
        print("per-call identity re-verification of a hardened process (uid \(uid)), \(runs) runs:")
        print(String(format: "  fstatat(stat) + poll(pidfd): median %.2f µs", Self.median(checks)))
        print(String(format: "  TracerPid + stat(exe) (replaced): median %.2f µs", Self.median(detections)))
        let (attributed, plain) = try Self.attributionCost(runs: runs, iterations: iterations)
        let added = zip(attributed, plain).map { $0 - $1 }
        print("a 100-byte write and its read on a Unix socket pair, \(runs) runs:")
        print(
            String(
                format: "  attributed (SO_PASSCRED, recvmsg, writer looked up): median %.2f µs", Self.median(attributed)
            ))
        print(String(format: "  plain read: median %.2f µs (added: %.2f µs)", Self.median(plain), Self.median(added)))
        try summary.append([
            SummaryRecord(
                benchmark: "verify", subject: "per-call identity re-verification", comparison: .atMost,
                targetValue: Self.targetMicroseconds, unit: "µs", baseline: nil, values: checks,
                note: String(format: "the detection it replaced: %.2f µs", Self.median(detections))),
            SummaryRecord(
                benchmark: "verify", subject: "sender attribution, added per message", comparison: .atMost,
                targetValue: Self.attributionTargetMicroseconds, unit: "µs", baseline: "plain read", values: added,
                note: String(
                    format: "write + read: %.2f µs attributed, %.2f µs plain", Self.median(attributed),
                    Self.median(plain))),
        ])
    }

    /// Microseconds per 100-byte write and read, attributed and plain, per run (medians of blocks
    /// of 100).
    static func attributionCost(runs: Int, iterations: Int) throws -> (attributed: [Double], plain: [Double]) {
        func pair() throws -> (CInt, CInt) {
            var ends: [CInt] = [-1, -1]
            guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                throw ValidationError("socketpair failed: errno \(errno)")
            }
            return (ends[0], ends[1])
        }
        let (agent, client) = try pair()
        let (plainAgent, plainClient) = try pair()
        defer { for fd in [agent, client, plainAgent, plainClient] { close(fd) } }
        var cookie: UInt64 = 0
        var length = socklen_t(MemoryLayout<UInt64>.size)
        guard getsockopt(agent, SOL_SOCKET, DescriptorPassing.cookieOption, &cookie, &length) == 0,
            cordon_senders_attribute(agent, cookie) == 0
        else { throw ValidationError("cannot attribute the socket pair") }
        defer { cordon_senders_forget(agent, cookie) }
        let message = [UInt8](repeating: 0x78, count: 100)
        var buffer = [UInt8](repeating: 0, count: 256)
        let me = getpid()
        func roundTrip(_ writer: CInt, _ reader: CInt, attributed: Bool) -> Bool {
            let sent = message.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            let got = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            return sent == 100 && got == 100 && (!attributed || cordon_senders_last(reader, cookie) == me)
        }
        var attributed: [Double] = []
        var plain: [Double] = []
        for _ in 0..<runs {
            var marked: [Double] = []
            var unmarked: [Double] = []
            for _ in 0..<(iterations / 100) {
                marked.append(timed(100) { roundTrip(client, agent, attributed: true) })
                unmarked.append(timed(100) { roundTrip(plainClient, plainAgent, attributed: false) })
            }
            attributed.append(median(marked))
            plain.append(median(unmarked))
        }
        return (attributed, plain)
    }

    /// Microseconds per call of `body`, timed over `count` calls.
    static func timed(_ count: Int, _ body: () -> Bool) -> Double {
        var kept = true
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { kept = body() && kept }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        precondition(kept, "a check failed while being timed")
        return Double(elapsed) / Double(count) / 1000
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw ValidationError(what) }
        return value
    }
}

/// A process that hardens itself (`PR_SET_DUMPABLE 0`) and waits: as uid 65534 when the benchmark
/// runs as root (an ordinary user, as apps are), else as the benchmark's own user.
final class HardenedChild {
    let process = Process()
    let uid: UInt32

    init() throws {
        let python = "/usr/bin/python3"
        let script =
            "import ctypes, sys; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); print('ready', flush=True); sys.stdin.read()"
        if getuid() == 0 {
            uid = 65534
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", script]
        } else {
            uid = getuid()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = ["-c", script]
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = Pipe()
        try process.run()
        _ = output.fileHandleForReading.availableData
    }

    var pid: Int32 { process.processIdentifier }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
