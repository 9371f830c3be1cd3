import Foundation
import Testing

/// An ordinary program of the user drops hostile files into the user's `policy.d`: a FIFO (no
/// writer ever comes), a symbolic link to `/dev/zero` (endless bytes) and a 600 MB file. The
/// agent rejects each, names it and why, reads none of them, and keeps serving. The agent, the
/// CLI and the program are one ordinary user (``UserAgent``: outside test mode).
@Suite struct PolicyFileBoundsTests {
    @Test func hostileFilesInPolicyDAreRejectedWithoutBeingRead() async throws {
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1"}"#, initialize: false)
        defer { agent.cleanUp() }
        let directory = agent.home.appending("config/policy.d")
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
        // The user's files, as if the program had made them.
        try await agent.give(agent.home.appending("config"))

        let status = try await agent.attack(
            """
            reply = call(connect(sys.argv[1]), "io.cordon.Policy.Reload")
            print(json.dumps({"error": error(reply), "sources": reply.get("parameters", {}).get("status", {}).get("sources", [])}))
            """)
        #expect(status["error"] is NSNull, "\(status)")
        let sources = try #require(status["sources"] as? [[String: Any]])
        func problems(_ path: String) -> String {
            sources.first { $0["path"] as? String == path }.map {
                ($0["problems"] as? [String] ?? []).joined(separator: "; ")
            } ?? "not listed"
        }
        #expect(problems(fifo) == "\(fifo): not a regular file (a FIFO); it was not read")
        #expect(problems(zero) == "\(zero): not a regular file (a character device); it was not read")
        #expect(
            problems(huge)
                == "\(huge): larger than the limit of 1048576 bytes (629145600 bytes); it was not read")
        #expect(
            sources.first { $0["path"] as? String == good }?["status"] as? String == "applied",
            "a good file next to them applies")

        // The store pool was not stuck on the FIFO: a passcode check (which runs there) answers.
        let initialized = try await agent.cli(["init", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let state = try await agent.cli(["status", "--json"])
        let fields = try JSONSerialization.jsonObject(with: Data(state.stdout.utf8)) as? [String: Any]
        #expect(fields?["state"] as? String == "unlocked", "\(state.stdout)")
        // Nothing of the 600 MB file or /dev/zero was read into memory (setpriv execs cordond: its pid).
        let peak = try #require(Self.peakResidentKiB(agent.process.processIdentifier))
        #expect(peak < 200 * 1024, "cordond's peak RSS is \(peak) KiB")
    }

    /// `VmHWM` from `/proc/PID/status`: the most memory the process ever had resident.
    static func peakResidentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
