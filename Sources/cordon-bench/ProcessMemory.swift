import Foundation

/// A process's memory from /proc: resident (VmRSS), its peak (VmHWM) and proportional (Pss,
/// from smaps_rollup; nil when this user may not read it, e.g. a non-dumpable process).
struct ProcessMemory: Codable {
    let rssKiB: Int
    let peakRssKiB: Int
    let pssKiB: Int?

    var rssMiB: Double { Double(rssKiB) / 1024 }
    var pssMiB: Double? { pssKiB.map { Double($0) / 1024 } }

    /// Reads the process `pid` now.
    static func read(pid: Int32) throws -> ProcessMemory {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let rss = field("VmRSS:", in: status) else {
            throw FanoutError.call("/proc/\(pid)/status", Int64(ENOENT))
        }
        let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
        return ProcessMemory(
            rssKiB: rss, peakRssKiB: field("VmHWM:", in: status) ?? rss,
            pssKiB: rollup.flatMap { field("Pss:", in: $0) })
    }

    /// The kB value on the line starting with `name`.
    private static func field(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                Int($0)
            }
        }
        return nil
    }
}
