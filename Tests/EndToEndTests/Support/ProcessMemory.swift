import Foundation

/// Reads another process's writable memory through `/proc/PID/mem` (the tests run as root,
/// which may read even a non-dumpable process): what a core dump, a swap file or a later
/// memory disclosure would give away.
enum ProcessMemory {
    /// How many times `needle` occurs in the private writable mappings of `pid` (its heap,
    /// anonymous mappings and thread stacks).
    static func occurrences(of needle: [UInt8], in pid: Int32) throws -> Int {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        guard let memory = FileHandle(forReadingAtPath: "/proc/\(pid)/mem") else {
            throw CocoaError(.fileReadNoPermission)
        }
        defer { try? memory.close() }
        var found = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] - bounds[0] <= 1 << 30 else { continue }
            var offset = bounds[0]
            // In chunks that overlap by the needle's length, so no occurrence is cut in two.
            while offset < bounds[1] {
                let length = min(UInt64(16 << 20), bounds[1] - offset)
                guard (try? memory.seek(toOffset: offset)) != nil,
                    let chunk = try? memory.read(upToCount: Int(length)), !chunk.isEmpty
                else { break }
                found += count(needle, in: chunk)
                guard offset + length < bounds[1] else { break }
                offset += length - UInt64(needle.count - 1)
            }
        }
        return found
    }

    private static func count(_ needle: [UInt8], in haystack: Data) -> Int {
        var found = 0
        var start = haystack.startIndex
        let pattern = Data(needle)
        while let range = haystack.range(of: pattern, in: start..<haystack.endIndex) {
            found += 1
            start = range.upperBound
        }
        return found
    }
}
