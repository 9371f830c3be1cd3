import Glibc

/// Reads and parses the small text files of `/proc/PID` (`stat`, `status`) as bytes, without
/// Foundation or `String`: every call an app makes for its data reads two of them again
/// (docs/ARCHITECTURE.md, "App identity"), so this stays a few system calls and a scan.
public enum ProcFile {
    /// The most bytes read of one file; `status` is under 2 KiB, `stat` under 1 KiB.
    static let limit = 16 * 1024

    /// Runs `body` with the contents of the file at `path` (at most ``limit`` bytes), or returns
    /// nil when it cannot be opened or read.
    public static func withContents<R>(_ path: String, _ body: (UnsafeRawBufferPointer) -> R?) -> R? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(byteCount: limit, alignment: 1) { buffer -> R? in
            guard let base = buffer.baseAddress else { return nil }
            var count = 0
            while count < buffer.count {
                let got = read(descriptor, base + count, buffer.count - count)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { return nil }
                if got == 0 { break }
                count += got
            }
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<count]))
        }
    }

    /// The value of the `status` line `key` (with its colon, as `TracerPid:`), as the unsigned
    /// number that follows it after tabs or spaces; nil when the line or the number is absent.
    public static func statusNumber(_ status: UnsafeRawBufferPointer, key: StaticString) -> UInt64? {
        let name = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < status.count {
            var lineEnd = lineStart
            while lineEnd < status.count && status[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if lineEnd - lineStart > name.count,
                (0..<name.count).allSatisfy({ status[lineStart + $0] == name[$0] })
            {
                var index = lineStart + name.count
                while index < lineEnd && (status[index] == UInt8(ascii: "\t") || status[index] == UInt8(ascii: " ")) {
                    index += 1
                }
                return number(status, from: index, to: lineEnd)
            }
            lineStart = lineEnd + 1
        }
        return nil
    }

    /// Field `field` (1-based, as proc(5) numbers them; 3 or later) of a `stat` line, as an
    /// unsigned number. The command (field 2) may hold spaces and parentheses: fields are counted
    /// from the last `)`.
    public static func statNumber(_ stat: UnsafeRawBufferPointer, field: Int) -> UInt64? {
        guard field >= 3, let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var index = close + 1
        var current = 2
        while index < stat.count {
            // Each field is one space and then its text.
            guard stat[index] == UInt8(ascii: " ") else { return nil }
            index += 1
            current += 1
            var end = index
            while end < stat.count && stat[end] != UInt8(ascii: " ") && stat[end] != UInt8(ascii: "\n") { end += 1 }
            if current == field { return number(stat, from: index, to: end) }
            index = end
            if index < stat.count && stat[index] == UInt8(ascii: "\n") { break }
        }
        return nil
    }

    /// The first byte of field 3 (the state letter) of a `stat` line.
    public static func statState(_ stat: UnsafeRawBufferPointer) -> UInt8? {
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.count else { return nil }
        return stat[close + 2]
    }

    /// The decimal number at `bytes[from...]`, ending at `to`, a tab or a space (as in `Uid:`,
    /// whose four ids the first of which is read); nil when there is no digit, another character
    /// comes before the end, or it overflows.
    static func number(_ bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> UInt64? {
        var value: UInt64 = 0
        var index = from
        while index < to {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\t") || byte == UInt8(ascii: " ") { break }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow && !carry else { return nil }
            value = sum
            index += 1
        }
        return index > from ? value : nil
    }
}
