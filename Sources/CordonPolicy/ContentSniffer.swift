/// The content type of a document told from its first bytes (magic numbers), so that
/// `documents.blockedTypes` is matched on what a file is, not on what its sender claims.
///
/// A small table, no I/O: the agent reads the bytes from the descriptor it opened and hands them
/// here. Recognised: PDF, PNG, JPEG, GIF, ZIP (and the Office and OpenDocument formats built on
/// it), ELF and PE executables, and plain text (UTF-8 without control characters other than
/// whitespace); anything else is `application/octet-stream`.
public enum ContentSniffer {
    /// The type given to content the table does not recognise.
    public static let unknown = "application/octet-stream"

    /// Magic numbers at offset 0 and the type they mean, first match wins.
    private static let signatures: [(magic: [UInt8], type: String)] = [
        (Array("%PDF-".utf8), "application/pdf"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "image/png"),
        ([0xFF, 0xD8, 0xFF], "image/jpeg"),
        (Array("GIF87a".utf8), "image/gif"),
        (Array("GIF89a".utf8), "image/gif"),
        ([0x50, 0x4B, 0x03, 0x04], "application/zip"),
        ([0x50, 0x4B, 0x05, 0x06], "application/zip"),
        ([0x7F, 0x45, 0x4C, 0x46], "application/x-executable"),
        (Array("MZ".utf8), "application/vnd.microsoft.portable-executable"),
    ]

    /// Claimed types that name the same content as a detected type (besides the type itself).
    private static let aliases: [String: Set<String>] = [
        "application/pdf": ["application/x-pdf"],
        "image/jpeg": ["image/jpg", "image/pjpeg"],
        "application/x-executable": [
            "application/x-elf", "application/x-sharedlib", "application/x-pie-executable",
            "application/x-object",
        ],
        "application/vnd.microsoft.portable-executable": [
            "application/x-msdownload", "application/x-dosexec", "application/x-msdos-program",
            "application/vnd.microsoft.portable-executable",
        ],
        "application/zip": ["application/x-zip-compressed", "application/java-archive", "application/epub+zip"],
    ]

    /// The detected type of content starting with `head` (the first few hundred bytes suffice).
    public static func contentType(of head: [UInt8]) -> String {
        for (magic, type) in signatures where head.starts(with: magic) { return type }
        return isText(head) ? "text/plain" : unknown
    }

    /// The usual extensions of content types, so that an extension in `blockedTypes` (`.pdf`)
    /// also blocks content of that type whatever the file is called.
    private static let extensions: [String: [String]] = [
        "application/pdf": [".pdf"], "application/x-pdf": [".pdf"], "image/png": [".png"],
        "image/jpeg": [".jpg", ".jpeg"], "image/gif": [".gif"], "application/zip": [".zip"],
        "application/x-executable": [".elf", ".so", ".bin"],
        "application/vnd.microsoft.portable-executable": [".exe", ".dll"], "text/plain": [".txt"],
    ]

    /// File names standing for `contentType`'s usual extensions (`x.pdf` for `application/pdf`).
    public static func fileNames(for contentType: String) -> [String] {
        (extensions[essence(contentType)] ?? []).map { "x" + $0 }
    }

    /// Whether a claimed content type says nothing a detection could contradict (absent, or
    /// `application/octet-stream`): the detected type is decided on instead.
    public static func isGeneric(_ claimed: String?) -> Bool {
        guard let claimed else { return true }
        let essence = self.essence(claimed)
        return essence.isEmpty || essence == unknown
    }

    /// Whether `claimed` contradicts the `detected` type: a recognised binary format claimed as
    /// another type, or text claimed as one of the binary formats above. Nothing contradicts
    /// unrecognised content, and a generic claim contradicts nothing.
    public static func contradicts(claimed: String, detected: String) -> Bool {
        guard !isGeneric(claimed), detected != unknown else { return false }
        let essence = self.essence(claimed)
        if detected == "text/plain" {
            return signatures.contains { $0.type == essence } || aliases.values.contains { $0.contains(essence) }
        }
        if essence == detected || aliases[detected]?.contains(essence) == true { return false }
        if detected == "application/zip" {
            // Office Open XML and OpenDocument files are ZIP archives.
            return
                !(essence.hasPrefix("application/vnd.openxmlformats-officedocument.")
                || essence.hasPrefix("application/vnd.oasis.opendocument.")
                || essence.hasPrefix("application/vnd.ms-") || essence.hasSuffix("+zip"))
        }
        return true
    }

    /// A MIME type without parameters, trimmed and lower-cased.
    static func essence(_ type: String) -> String {
        let base = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(base.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()).lowercased()
    }

    /// UTF-8 (a sequence cut at the end of `head` allowed) with no NUL or control characters but
    /// tab, line feed, carriage return and form feed.
    static func isText(_ head: [UInt8]) -> Bool {
        var index = 0
        while index < head.count {
            let byte = head[index]
            if byte < 0x80 {
                if byte < 0x20, ![0x09, 0x0A, 0x0C, 0x0D].contains(byte) { return false }
                if byte == 0x7F { return false }
                index += 1
                continue
            }
            let length: Int
            switch byte {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return false
            }
            for offset in 1..<length {
                guard index + offset < head.count else { return true }
                guard head[index + offset] & 0xC0 == 0x80 else { return false }
            }
            index += length
        }
        return true
    }
}
