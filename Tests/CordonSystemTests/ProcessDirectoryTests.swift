import CordonSystem
import Foundation
import Testing

/// `ProcessDirectory` tells, from the owner of `/proc/PID/stat`, whether a process of an ordinary
/// user is dumpable, and keeps telling about that very process only.
@Suite struct ProcessDirectoryTests {
    /// A Python process of uid 65534 that hardens itself (`PR_SET_DUMPABLE 0`) when told to on its
    /// standard input, and says so on its standard output.
    final class UserProcess: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        let output = Pipe()

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3.11", "-c",
                """
                import ctypes, sys
                print("ready", flush=True)
                sys.stdin.readline()
                ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
                print("hardened", flush=True)
                sys.stdin.readline()
                """,
            ]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            try expectLine("ready")
        }

        var pid: Int32 { process.processIdentifier }

        func harden() throws {
            input.fileHandleForWriting.write(Data("\n".utf8))
            try expectLine("hardened")
        }

        private func expectLine(_ line: String) throws {
            var read = Data()
            while !read.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                try #require(!chunk.isEmpty, "the process ended before saying \(line)")
                read += chunk
            }
            #expect(String(decoding: read, as: UTF8.self).trimmingCharacters(in: .newlines) == line)
        }
    }

    @Test func anOrdinaryProcessIsDumpableUntilItHardensAndExitedAfterItEnds() throws {
        let user = try UserProcess()
        let pidfd = try #require(Pidfd(pid: user.pid))
        let directory = try #require(ProcessDirectory(pid: user.pid))
        #expect(!pidfd.hasExited)
        #expect(directory.dumpability(uid: 65534) == .dumpable)
        try user.harden()
        #expect(directory.dumpability(uid: 65534) == .nonDumpable)
        // SIGKILL: a child of the test runner inherits its blocked signals, SIGTERM among them.
        kill(user.pid, SIGKILL)
        user.process.waitUntilExit()
        #expect(pidfd.hasExited)
        #expect(directory.dumpability(uid: 65534) == .exited)
    }

    @Test func rootsProcessesShowNoDumpability() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let directory = try #require(ProcessDirectory(pid: process.processIdentifier))
        #expect(directory.dumpability(uid: 0) == .unknown)
    }

    @Test func aMissingProcessHasNoDirectory() {
        #expect(ProcessDirectory(pid: Int32.max) == nil)
    }
}
