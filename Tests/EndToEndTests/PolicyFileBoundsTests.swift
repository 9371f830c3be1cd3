import CordonKit
import CordonProtocol
import Foundation
import Testing

/// An ordinary program of the user drops hostile files into the user's `policy.d`: a FIFO (no
/// writer ever comes), a symbolic link to `/dev/zero` (endless bytes) and a 600 MB file. The
/// agent rejects each, names it and why, reads none of them, and keeps serving.
@Suite struct PolicyFileBoundsTests {
    @Test func hostileFilesInPolicyDAreRejectedWithoutBeingRead() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let directory = daemon.userPolicyDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fifo = directory + "/10-fifo.json"
        let zero = directory + "/20-zero.json"
        let huge = directory + "/30-huge.json"
        let good = directory + "/40-good.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: zero, withDestinationPath: "/dev/zero")
        // 600 MB that cost no disk: a sparse file.
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 600 * 1024 * 1024) == 0)
        try #"{"schema": "cordon.policy.v1", "pasteboard": {"maxChars": 77}}"#
            .write(toFile: good, atomically: true, encoding: .utf8)

        let client = try await daemon.client()
        let status = try await client.reloadPolicy()
        func problems(_ path: String) -> String {
            status.sources.first { $0.path == path }.map { $0.problems.joined(separator: "; ") } ?? "not listed"
        }
        #expect(problems(fifo) == "\(fifo): not a regular file (a FIFO); it was not read")
        #expect(problems(zero) == "\(zero): not a regular file (a character device); it was not read")
        #expect(
            problems(huge)
                == "\(huge): larger than the limit of 1048576 bytes (629145600 bytes); it was not read")
        #expect(status.sources.first { $0.path == good }?.status == .applied, "a good file next to them applies")

        // The store pool was not stuck on the FIFO: a passcode check (which runs there) answers.
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        #expect(try await client.status().state == .unlocked)
        // Nothing of the 600 MB file or /dev/zero was read into memory.
        let peak = try #require(Self.peakResidentKiB(daemon.pid))
        #expect(peak < 200 * 1024, "cordond's peak RSS is \(peak) KiB")
        await client.close()
        try await daemon.stop()
    }

    /// `VmHWM` from `/proc/PID/status`: the most memory the process ever had resident.
    static func peakResidentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
