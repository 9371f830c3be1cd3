import CordonSystem
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ProcFile`: the byte-level reading of `/proc/PID/stat` and `status` that every data call's
/// re-verification of its app goes through, against synthetic files and this very process.
@Suite struct ProcFileTests {
    /// Runs `body` on the bytes of `text`.
    func bytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        Array(text.utf8).withUnsafeBytes(body)
    }

    let status = """
        Name:\tpython3
        Umask:\t0022
        State:\tS (sleeping)
        Tgid:\t4242
        PPid:\t1
        TracerPid:\t17
        Uid:\t1000\t1001\t1002\t1003
        Gid:\t100\t101\t102\t103
        NoTracerPid:\t99

        """

    @Test func statusNumbersAreReadByKeyAtTheStartOfALine() {
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "TracerPid:") } == 17)
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "PPid:") } == 1)
        // The first of the four ids: the real one.
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "Uid:") } == 1000)
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "Gid:") } == 100)
    }

    @Test func aMissingKeyOrAValueThatIsNotANumberIsNil() {
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "Seccomp:") } == nil)
        #expect(bytes(status) { ProcFile.statusNumber($0, key: "State:") } == nil)
        #expect(bytes("TracerPid:\t\n") { ProcFile.statusNumber($0, key: "TracerPid:") } == nil)
        #expect(bytes("TracerPid:\t99999999999999999999999\n") { ProcFile.statusNumber($0, key: "TracerPid:") } == nil)
        #expect(bytes("") { ProcFile.statusNumber($0, key: "TracerPid:") } == nil)
    }

    @Test func statFieldsAreCountedFromTheLastParenthesis() {
        // A command may hold spaces and parentheses; proc(5) numbers fields from 1 (the pid).
        let fields = (3...25).map { $0 == 3 ? "S" : String($0 * 10) }.joined(separator: " ")
        let stat = "4242 (evil) 1 2 (x) \(fields)\n"
        #expect(bytes(stat) { ProcFile.statState($0) } == UInt8(ascii: "S"))
        #expect(bytes(stat) { ProcFile.statNumber($0, field: 4) } == 40)
        #expect(bytes(stat) { ProcFile.statNumber($0, field: 22) } == 220)
        #expect(bytes(stat) { ProcFile.statNumber($0, field: 25) } == 250)
        #expect(bytes(stat) { ProcFile.statNumber($0, field: 26) } == nil)
        #expect(bytes(stat) { ProcFile.statNumber($0, field: 3) } == nil)  // "S" is not a number
        #expect(bytes("4242 no parenthesis 1 2") { ProcFile.statNumber($0, field: 4) } == nil)
    }

    @Test func thisProcessReadsAsTheSystemCallsSayIt() throws {
        let pid = getpid()
        let family = try #require(ProcessInfoReader.parentAndGroup(of: pid))
        #expect(family.ppid == getppid())
        #expect(family.pgrp == getpgrp())
        let owner = try #require(ProcessInfoReader.owner(of: pid))
        #expect(owner.uid == getuid())
        #expect(owner.gid == getgid())
        // The start time as proc(5) puts it, split the slow way.
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let afterCommand = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        #expect(ProcessInfoReader.startTime(of: pid) == UInt64(afterCommand[19]))
        let tracer = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8).split(separator: "\n")
            .first { $0.hasPrefix("TracerPid:") }
        let expected = tracer?.split(separator: "\t").last.map(String.init)
        #expect(ProcessInfoReader.tracerPID(of: pid).map(String.init) == expected)
    }

    @Test func aProcessThatDoesNotExistReadsAsNil() {
        // Above the kernel's pid_max, so never a live process.
        let pid: Int32 = 1 << 23
        #expect(ProcessInfoReader.tracerPID(of: pid) == nil)
        #expect(ProcessInfoReader.startTime(of: pid) == nil)
        #expect(ProcessInfoReader.owner(of: pid) == nil)
        #expect(ProcessInfoReader.parentAndGroup(of: pid) == nil)
    }
}
