/// The content type of a document told from its bytes the way the programs that open it tell it,
/// so that `documents.blockedTypes` is matched on what a file is, not on what its sender claims.
///
/// A small table, no I/O: the agent reads the bytes from the snapshot it took and hands them
/// here. Recognised: PDF, PNG, JPEG, GIF, ZIP (and the Office and OpenDocument formats built on
/// it), ELF and PE executables, and plain text (UTF-8 without control characters other than
/// whitespace); anything else is `application/octet-stream`.
///
/// Where a reader looks is where the sniffer looks: a format identified at offset 0 (PNG, JPEG,
/// GIF, ELF, PE: their readers and loaders insist on it), a PDF header (`%PDF-`) anywhere in the
/// first KiB (as Acrobat, pdf.js and poppler accept it: behind a byte-order mark, a blank line or
/// some text) or a PDF trailer (`startxref` … `%%EOF`) in the last KiB (pypdf and poppler open a
/// file without any header), and a ZIP's end-of-central-directory record in the last 64 KiB (ZIP
/// readers find the archive from its end, whatever comes before). A file may be several of these
/// at once (a polyglot): ``contentTypes(head:tail:)`` lists each.
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

    /// The detected type of content starting with `head` (the whole content, for a short one).
    public static func contentType(of head: [UInt8]) -> String {
        contentTypes(head: head, tail: head)[0]
    }

    /// Every type the content opens as, the main one first: the format at offset 0, then a PDF
    /// (header in the first KiB of `head`, or trailer in the last KiB of `tail`), then a ZIP
    /// (end-of-central-directory record in `tail`); plain text or `application/octet-stream` when
    /// it is none of them. `head` is the content's first bytes (1 KiB suffices) and `tail` its
    /// last (64 KiB + 22 suffice); for short content both are the whole of it.
    public static func contentTypes(head: [UInt8], tail: [UInt8]) -> [String] {
        var types: [String] = []
        for (magic, type) in signatures where head.starts(with: magic) {
            types.append(type)
            break
        }
        if !types.contains(pdf), containsPDFHeader(head) || containsPDFTrailer(tail) { types.append(pdf) }
        if !types.contains(zip), containsZIPEnd(tail) { types.append(zip) }
        if types.isEmpty { types.append(isText(head) && isText(tail, fromAnyOffset: true) ? "text/plain" : unknown) }
        return types
    }

    static let pdf = "application/pdf"
    static let zip = "application/zip"

    /// How far into the content PDF readers look for the header, and from the end for `%%EOF`.
    static let pdfWindow = 1024

    /// `%PDF-` within the first KiB.
    static func containsPDFHeader(_ head: [UInt8]) -> Bool {
        find(Array("%PDF-".utf8), in: head[..<min(head.count, pdfWindow)]) != nil
    }

    /// `%%EOF` in the last KiB, after a `startxref`: the trailer a reader opens a PDF from.
    static func containsPDFTrailer(_ tail: [UInt8]) -> Bool {
        let window = tail[max(0, tail.count - pdfWindow)...]
        guard let end = findLast(Array("%%EOF".utf8), in: window) else { return false }
        return findLast(Array("startxref".utf8), in: window[..<end]) != nil
    }

    /// A ZIP end-of-central-directory record (`PK\u{5}\u{6}`, 22 bytes, then its comment) that
    /// ends within `tail`, searched from the end as ZIP readers do.
    static func containsZIPEnd(_ tail: [UInt8]) -> Bool {
        guard tail.count >= 22 else { return false }
        var index = tail.count - 22
        while index >= 0 {
            if tail[index] == 0x50, tail[index + 1] == 0x4B, tail[index + 2] == 0x05, tail[index + 3] == 0x06 {
                let comment = Int(tail[index + 20]) | Int(tail[index + 21]) << 8
                if index + 22 + comment <= tail.count { return true }
            }
            index -= 1
        }
        return false
    }

    /// The index of the first occurrence of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count, let first = needle.first else { return nil }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// The index of the last occurrence of `needle` in `haystack`.
    static func findLast(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count, let first = needle.first else { return nil }
        var index = haystack.endIndex - needle.count
        while index >= haystack.startIndex {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index -= 1
        }
        return nil
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

    /// UTF-8 (a sequence cut at the end of `head` allowed; with `fromAnyOffset`, also one cut at
    /// its start) with no NUL or control characters but tab, line feed, carriage return and form
    /// feed.
    static func isText(_ head: [UInt8], fromAnyOffset: Bool = false) -> Bool {
        var index = 0
        if fromAnyOffset {
            while index < min(3, head.count), head[index] & 0xC0 == 0x80 { index += 1 }
        }
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
