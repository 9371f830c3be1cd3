/// Matches content types and file names against `documents.blockedTypes`, case-insensitively and
/// without allocating.
///
/// An entry containing `/` is a MIME type: it matches the content type exactly (parameters after
/// `;` ignored), `type/*` matches every subtype of `type`, `*/*` every MIME type. Any other entry
/// is an extension (`.exe`, or `exe`): it matches a content type or file name ending in `.exe`
/// (so `.tar.gz` matches `backup.tar.gz`), or a bare extension `exe` / `.exe`.
struct BlockedTypeMatcher: Sendable {
    /// A blocked type with the rules that list it and the sentence a denial gives.
    struct Entry: Sendable {
        let pattern: String
        let rules: [RuleReference]
        let reason: String
    }

    private enum Kind: Sendable {
        case mime, mimePrefix, anyMIME, fileExtension
    }

    /// Lower-cased pattern bytes (`image/` for `image/*`, `.exe` for `.exe` or `exe`) by kind.
    private let entries: [(kind: Kind, bytes: [UInt8], entry: Entry)]

    /// Whether nothing is blocked.
    var isEmpty: Bool { entries.isEmpty }

    /// A `blockedTypes` entry as the merge keeps it: trimmed and lower-cased; nil when blank.
    static func normalized(_ raw: String) -> String? {
        let trimmed = PolicyFormat.trimmed(raw).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Compiles the merged `blockedTypes`; `setting` names the setting in reasons.
    init(_ blocked: ResolvedSetting<Set<String>>, setting: String) {
        var rulesByPattern: [String: [RuleReference]] = [:]
        for candidate in blocked.candidates {
            for pattern in candidate.value { rulesByPattern[pattern, default: []].append(candidate.rule) }
        }
        entries = blocked.value.sorted().map { pattern in
            let entry = Entry(
                pattern: pattern, rules: rulesByPattern[pattern] ?? blocked.rules,
                reason: "\(setting) lists \(PolicyFormat.quoted(pattern)) and the content matches it")
            if pattern == "*/*" { return (.anyMIME, [], entry) }
            if pattern.hasSuffix("/*") { return (.mimePrefix, Array(pattern.utf8.dropLast()), entry) }
            if pattern.contains("/") { return (.mime, Array(pattern.utf8), entry) }
            let dotted = pattern.hasPrefix(".") ? pattern : "." + pattern
            return (.fileExtension, Array(dotted.utf8), entry)
        }
    }

    /// The first blocked type `contentType` (a MIME type, file name or extension) matches.
    func match(contentType: String) -> Entry? {
        guard !entries.isEmpty else { return nil }
        var text = contentType
        return text.withUTF8 { bytes in
            let mime = Self.mimeEssence(bytes)
            let name = Self.lastComponent(bytes)
            let bare = !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(UInt8(ascii: "."))
            for (kind, pattern, entry) in entries {
                switch kind {
                case .mime: if Self.equalFolded(mime, pattern[...]) { return entry }
                case .mimePrefix: if Self.hasPrefixFolded(mime, pattern) { return entry }
                case .anyMIME: if Self.isMIMEShaped(mime) { return entry }
                case .fileExtension:
                    if Self.hasSuffixFolded(name, pattern) { return entry }
                    if bare, Self.equalFolded(name, pattern.dropFirst()) { return entry }
                }
            }
            return nil
        }
    }

    /// The first blocked extension the file name at `path` ends with (MIME entries are skipped).
    func match(fileName path: String) -> Entry? {
        guard !entries.isEmpty else { return nil }
        var text = path
        return text.withUTF8 { bytes in
            let name = Self.lastComponent(bytes)
            for (kind, pattern, entry) in entries where kind == .fileExtension {
                if Self.hasSuffixFolded(name, pattern) { return entry }
            }
            return nil
        }
    }

    /// The content type before any `;` parameters, without surrounding spaces.
    private static func mimeEssence(_ bytes: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        var start = bytes.startIndex
        while start < end, bytes[start] == UInt8(ascii: " ") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return bytes[start..<end]
    }

    /// The part after the last `/`.
    private static func lastComponent(_ bytes: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes[...] }
        return bytes[(slash + 1)...]
    }

    /// `type/subtype`: exactly one `/`, neither first nor last.
    private static func isMIMEShaped(_ mime: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard let slash = mime.firstIndex(of: UInt8(ascii: "/")) else { return false }
        return slash > mime.startIndex && slash < mime.endIndex - 1
            && !mime[(slash + 1)...].contains(UInt8(ascii: "/"))
    }

    private static func folded(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func equalFolded(_ text: Slice<UnsafeBufferPointer<UInt8>>, _ pattern: ArraySlice<UInt8>) -> Bool {
        text.count == pattern.count && zip(text, pattern).allSatisfy { folded($0) == $1 }
    }

    private static func hasPrefixFolded(_ text: Slice<UnsafeBufferPointer<UInt8>>, _ pattern: [UInt8]) -> Bool {
        text.count > pattern.count && zip(text, pattern).allSatisfy { folded($0) == $1 }
    }

    private static func hasSuffixFolded(_ text: Slice<UnsafeBufferPointer<UInt8>>, _ pattern: [UInt8]) -> Bool {
        text.count >= pattern.count && zip(text.suffix(pattern.count), pattern).allSatisfy { folded($0) == $1 }
    }
}
