import ArgumentParser
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
        try summary.append([
            SummaryRecord(
                benchmark: "verify", subject: "per-call identity re-verification", comparison: .atMost,
                targetValue: Self.targetMicroseconds, unit: "µs", baseline: nil, values: checks,
                note: String(format: "the detection it replaced: %.2f µs", Self.median(detections)))
        ])
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
