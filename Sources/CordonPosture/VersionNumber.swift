/// A dotted version compared number by number (`6.18.44-fc` ≥ `6.1`; `12` ≥ `11.8`): the leading
/// digits of each dot-separated part count, the rest (`-fc-v657`) is ignored.
struct VersionNumber: Comparable {
    let parts: [Int]

    init(_ text: String) {
        var parts: [Int] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            let digits = part.prefix { $0.isASCII && $0.isNumber }
            guard let value = Int(digits) else { break }
            parts.append(value)
            if digits.count < part.count { break }
        }
        self.parts = parts
    }

    static func < (lhs: Self, rhs: Self) -> Bool {
        for index in 0..<max(lhs.parts.count, rhs.parts.count) {
            let left = index < lhs.parts.count ? lhs.parts[index] : 0
            let right = index < rhs.parts.count ? rhs.parts[index] : 0
            if left != right { return left < right }
        }
        return false
    }
}

/// `os-release` (`KEY=value`, values optionally quoted).
enum OSRelease {
    static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            var value = line[line.index(after: equals)...]
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            fields[String(line[..<equals])] = String(value)
        }
        return fields
    }
}
