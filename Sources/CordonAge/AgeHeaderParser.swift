/// Parses an age v1 header from the start of a buffer, strictly by the C2SP grammar: the exact
/// version line, `-> ` argument lines of VCHAR arguments, body lines of canonical unpadded
/// base64 of at most 64 columns ending with a shorter line, and `--- ` with a 43-character MAC.
/// Pure: no I/O; a decryptor calls it as bytes arrive.
public enum AgeHeaderParser {
    /// The largest header accepted (many recipients fit; a stream of garbage does not).
    public static let maximumHeaderBytes = 1 << 20

    /// The header at the start of `buffer` and the number of bytes it takes, or nil when
    /// `buffer` ends before the header does and `atEnd` is false.
    public static func parse(_ buffer: some RandomAccessCollection<UInt8>, atEnd: Bool) throws(AgeError) -> (
        header: AgeHeader, length: Int
    )? {
        var lines = Lines(bytes: Array(buffer.prefix(maximumHeaderBytes + 1)), atEnd: atEnd)
        guard let version = try lines.next() else { return nil }
        guard Array(version) + [0x0A] == AgeHeader.versionLine else {
            if version.starts(with: AgeHeader.versionPrefix) {
                throw .unsupportedVersion(
                    String(decoding: version.dropFirst(AgeHeader.versionPrefix.count), as: UTF8.self))
            }
            throw .malformedHeader(line: 1, reason: "the first line is not 'age-encryption.org/v1'")
        }
        var stanzas: [AgeStanza] = []
        while true {
            let lineStart = lines.position
            guard let line = try lines.next() else { return nil }
            if line.starts(with: AgeHeader.macMark) {
                let macText = line.dropFirst(AgeHeader.macMark.count)
                guard macText.first == 0x20 else {
                    throw .malformedHeader(line: lines.number, reason: "the MAC line must be '--- ' and the MAC")
                }
                guard let mac = AgeBase64.decodeUnpadded(macText.dropFirst()), mac.count == 32 else {
                    throw .malformedHeader(
                        line: lines.number, reason: "the MAC is not the canonical unpadded base64 of 32 bytes")
                }
                guard !stanzas.isEmpty else {
                    throw .malformedHeader(line: lines.number, reason: "the header has no recipient stanza")
                }
                let authenticated = Array(lines.bytes[0..<(lineStart + AgeHeader.macMark.count)])
                return (AgeHeader(stanzas: stanzas, mac: mac, authenticatedBytes: authenticated), lines.position)
            }
            guard let stanza = try parseStanza(opening: line, lines: &lines) else {
                return nil
            }
            stanzas.append(stanza)
        }
    }

    /// One stanza from its `-> ` line and the body lines that follow it.
    private static func parseStanza(
        opening line: ArraySlice<UInt8>, lines: inout Lines
    ) throws(AgeError) -> AgeStanza? {
        let opening = lines.number
        guard line.starts(with: Array("-> ".utf8)) else {
            throw .malformedHeader(
                line: opening, reason: "a stanza must start with '-> ' (or the MAC line with '--- ')")
        }
        let arguments = line.dropFirst(3).split(separator: 0x20, omittingEmptySubsequences: false)
        guard arguments.allSatisfy(AgeStanza.isValidArgument) else {
            throw .malformedHeader(line: opening, reason: "a stanza argument is empty or not printable ASCII")
        }
        let strings = arguments.map { String(decoding: $0, as: UTF8.self) }
        var body: [UInt8] = []
        while true {
            guard let bodyLine = try lines.next() else { return nil }
            guard bodyLine.count <= AgeHeader.columns else {
                throw .malformedHeader(line: lines.number, reason: "a body line is longer than 64 columns")
            }
            guard let decoded = AgeBase64.decodeUnpadded(bodyLine) else {
                throw .malformedHeader(
                    line: lines.number,
                    reason: "a body line is not canonical unpadded base64 (or the stanza lacks its short last line)")
            }
            body += decoded
            if bodyLine.count < AgeHeader.columns {
                return AgeStanza(type: strings[0], arguments: Array(strings.dropFirst()), body: body)
            }
        }
    }

    /// The header's lines, one at a time, each without its LF.
    struct Lines {
        let bytes: [UInt8]
        let atEnd: Bool
        var position = 0
        var number = 0

        /// The next line, or nil when it is incomplete and more bytes may come.
        mutating func next() throws(AgeError) -> ArraySlice<UInt8>? {
            number += 1
            guard let end = bytes[position...].firstIndex(of: 0x0A) else {
                if bytes.count > maximumHeaderBytes { throw .headerTooLarge(limit: maximumHeaderBytes) }
                guard atEnd else { return nil }
                if bytes.isEmpty { throw .malformedHeader(line: 1, reason: "the file is empty") }
                throw .truncated("header")
            }
            let line = bytes[position..<end]
            position = end + 1
            return line
        }
    }
}
