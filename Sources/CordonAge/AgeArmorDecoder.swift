/// Streams ASCII armor back to binary, as strictly as age's own reader: whitespace (at most 1 KiB)
/// is allowed only before and after the block, lines end with LF or CRLF, every line but the
/// last is exactly 64 columns of padded canonical base64, the last is shorter (or full) and is
/// followed by the END line. It holds at most one line.
public struct AgeArmorDecoder: Sendable {
    private enum State: Sendable {
        case leading(whitespace: Int)
        case body
        case expectEnd
        case trailing(whitespace: Int)
    }

    private var state = State.leading(whitespace: 0)
    private var line: [UInt8] = []
    private var lineNumber = 1
    private var failure: AgeError?

    /// A decoder expecting the BEGIN line (after optional whitespace).
    public init() {}

    /// Decodes `input`, returning the binary bytes of the lines it completed.
    public mutating func update(_ input: [UInt8]) throws(AgeError) -> [UInt8] {
        if let failure { throw failure }
        var output: [UInt8] = []
        do throws(AgeError) {
            for byte in input {
                if case .trailing(let whitespace) = state {
                    guard AgeArmor.isWhitespace(byte) else { throw fail("data after the END line") }
                    guard whitespace + 1 < AgeArmor.maximumWhitespace else {
                        throw fail("too much trailing whitespace")
                    }
                    state = .trailing(whitespace: whitespace + 1)
                    continue
                }
                if byte == 0x0A {
                    try endLine(into: &output)
                    lineNumber += 1
                    continue
                }
                line.append(byte)
                // No valid line is longer than 64 columns and a CR (the BEGIN line is shorter).
                if line.count > AgeArmor.columns + 1, !isLeadingWhitespace() {
                    throw fail("a line is longer than 64 columns")
                }
                if case .leading(let whitespace) = state, whitespace + line.count > AgeArmor.maximumWhitespace,
                    isLeadingWhitespace()
                {
                    throw fail("too much leading whitespace")
                }
            }
        } catch {
            failure = error
            throw error
        }
        return output
    }

    /// Ends the input: the END line must have been read (its final line feed is optional).
    public mutating func finish() throws(AgeError) -> [UInt8] {
        if let failure { throw failure }
        var output: [UInt8] = []
        do throws(AgeError) {
            if !line.isEmpty { try endLine(into: &output) }
            guard case .trailing = state else { throw fail("the END line is missing") }
        } catch {
            failure = error
            throw error
        }
        return output
    }

    private func isLeadingWhitespace() -> Bool {
        if case .leading = state { return line.allSatisfy(AgeArmor.isWhitespace) }
        return false
    }

    private func fail(_ reason: String) -> AgeError {
        .armor(line: lineNumber, reason: reason)
    }

    /// Handles one complete line (its LF removed; a CR before it is removed here).
    private mutating func endLine(into output: inout [UInt8]) throws(AgeError) {
        var text = line[...]
        if text.last == 0x0D { text = text.dropLast() }
        defer { line.removeAll(keepingCapacity: true) }
        switch state {
        case .leading(let whitespace):
            if text.allSatisfy(AgeArmor.isWhitespace) {
                guard whitespace + line.count + 1 <= AgeArmor.maximumWhitespace else {
                    throw fail("too much leading whitespace")
                }
                state = .leading(whitespace: whitespace + line.count + 1)
                return
            }
            guard Array(text) == AgeArmor.beginLine else {
                throw fail("the first line is not '-----BEGIN AGE ENCRYPTED FILE-----'")
            }
            state = .body
        case .body:
            if Array(text) == AgeArmor.endLine {
                state = .trailing(whitespace: 0)
                return
            }
            guard !text.isEmpty else { throw fail("an empty line inside the armor") }
            guard text.count <= AgeArmor.columns else { throw fail("a line is longer than 64 columns") }
            guard let decoded = AgeBase64.decode(Array(text), padded: true) else {
                throw fail("a line is not canonical padded base64")
            }
            output += decoded
            if decoded.count < AgeArmor.bytesPerLine { state = .expectEnd }
        case .expectEnd:
            guard Array(text) == AgeArmor.endLine else { throw fail("a short line must be followed by the END line") }
            state = .trailing(whitespace: 0)
        case .trailing:
            // Unreachable: trailing bytes are checked one by one in update.
            throw fail("data after the END line")
        }
    }
}
