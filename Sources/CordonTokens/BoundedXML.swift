/// An element of a document read by `BoundedXML`.
public struct XMLElement: Sendable, Equatable {
    public var name: String
    /// Child elements in order.
    public var children: [XMLElement]
    /// The element's own character data (entity references decoded), not its children's.
    public var text: String
    /// The byte offset of its start tag.
    public var offset: Int
    /// Its attributes by qualified name (entity references decoded).
    public var attributes: [String: String] = [:]

    /// The first child named `name`.
    public func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }

    /// The name without its namespace prefix (`ds:Modulus` → `Modulus`).
    public var localName: Substring { name.split(separator: ":", maxSplits: 1).last ?? Substring(name) }

    /// The first child whose local name is `name`, whatever its prefix.
    public func local(_ name: String) -> XMLElement? { children.first { $0.localName == name } }
}

/// A small, bounded XML reader for SDTID files and CT-KIP messages: elements, attributes, character data,
/// comments, processing instructions and CDATA. It refuses DTDs (`<!DOCTYPE`), so no entity can be
/// declared, and any entity reference other than the five predefined ones and character references;
/// it caps the document, each element's text, the depth and the number of elements.
public enum BoundedXML {
    public struct Limits: Sendable {
        public var document = 256 * 1024
        public var text = 8 * 1024
        public var depth = 16
        public var elements = 4096
        public init() {}
    }

    /// The root element of `bytes`, or `.malformed(format: "xml", offset:, reason:)`.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(TokenFormatError) -> XMLElement {
        if bytes.count > limits.document {
            throw .malformed(
                format: "xml", offset: limits.document, reason: "the document is over \(limits.document) bytes")
        }
        var parser = Parser(bytes: bytes, limits: limits)
        return try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: Limits
        var position = 0
        var elementCount = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
            if bytes.starts(with: [0xef, 0xbb, 0xbf]) { position = 3 }
        }

        func fail(_ reason: String, at offset: Int? = nil) -> TokenFormatError {
            .malformed(format: "xml", offset: offset ?? position, reason: reason)
        }

        func starts(_ text: String) -> Bool { bytes[position...].starts(with: text.utf8) }

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[position]) { position += 1 }
        }

        mutating func skip(past terminator: String, what: String) throws(TokenFormatError) {
            let start = position
            let pattern = Array(terminator.utf8)
            while position + pattern.count <= bytes.count {
                if bytes[position..<position + pattern.count].elementsEqual(pattern) {
                    position += pattern.count
                    return
                }
                position += 1
            }
            throw fail("unterminated \(what)", at: start)
        }

        /// Comments, processing instructions and whitespace between elements; refuses a DTD.
        mutating func skipMisc() throws(TokenFormatError) {
            while true {
                skipWhitespace()
                if starts("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if starts("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if starts("<!") {
                    throw fail("DTDs and entity declarations are refused")
                } else {
                    return
                }
            }
        }

        mutating func document() throws(TokenFormatError) -> XMLElement {
            try skipMisc()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
                throw fail("the document has no root element")
            }
            let root = try element(depth: 1)
            try skipMisc()
            if position < bytes.count { throw fail("content after the root element") }
            return root
        }

        mutating func name() throws(TokenFormatError) -> String {
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                let isNameByte =
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || [UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":")].contains(byte)
                    || byte >= 0x80
                guard isNameByte else { break }
                position += 1
            }
            guard position > start, position - start <= 256 else { throw fail("a name is expected", at: start) }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func element(depth: Int) throws(TokenFormatError) -> XMLElement {
            let start = position
            if depth > limits.depth { throw fail("elements nest deeper than \(limits.depth)") }
            elementCount += 1
            if elementCount > limits.elements { throw fail("more than \(limits.elements) elements") }
            position += 1  // <
            let tag = try name()
            var attributes: [String: String] = [:]
            // Attributes: name="value" or name='value', values without '<' and with checked references.
            while true {
                skipWhitespace()
                guard position < bytes.count else { throw fail("unterminated start tag", at: start) }
                if bytes[position] == UInt8(ascii: "/") {
                    guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else {
                        throw fail("'/' must end an empty element")
                    }
                    position += 2
                    return XMLElement(name: tag, children: [], text: "", offset: start, attributes: attributes)
                }
                if bytes[position] == UInt8(ascii: ">") {
                    position += 1
                    break
                }
                let attribute = try name()
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { throw fail("'=' expected") }
                position += 1
                skipWhitespace()
                guard position < bytes.count, bytes[position] == 0x22 || bytes[position] == 0x27 else {
                    throw fail("a quoted attribute value is expected")
                }
                let quote = bytes[position]
                position += 1
                var value: [UInt8] = []
                while position < bytes.count, bytes[position] != quote {
                    if bytes[position] == UInt8(ascii: "<") { throw fail("'<' in an attribute value") }
                    try character(into: &value)
                    if value.count > limits.text { throw fail("an attribute value is over \(limits.text) bytes") }
                }
                guard position < bytes.count else { throw fail("unterminated attribute value") }
                position += 1
                guard attributes.count < 64 else { throw fail("more than 64 attributes on <\(tag)>") }
                attributes[attribute] = String(decoding: value, as: UTF8.self)
            }
            var children: [XMLElement] = []
            var text: [UInt8] = []
            while true {
                guard position < bytes.count else { throw fail("element <\(tag)> is not closed", at: start) }
                if starts("</") {
                    position += 2
                    let closing = try name()
                    guard closing == tag else { throw fail("</\(closing)> closes <\(tag)>") }
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                        throw fail("'>' expected")
                    }
                    position += 1
                    guard let string = String(validating: text, as: UTF8.self) else {
                        throw fail("the text of <\(tag)> is not UTF-8", at: start)
                    }
                    return XMLElement(
                        name: tag, children: children, text: string, offset: start, attributes: attributes)
                } else if starts("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if starts("<![CDATA[") {
                    let cdataStart = position
                    position += 9
                    let contentStart = position
                    try skip(past: "]]>", what: "CDATA section")
                    text += bytes[contentStart..<(position - 3)]
                    if text.count > limits.text { throw fail("text over \(limits.text) bytes", at: cdataStart) }
                } else if starts("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if starts("<!") {
                    throw fail("DTDs and entity declarations are refused")
                } else if bytes[position] == UInt8(ascii: "<") {
                    children.append(try element(depth: depth + 1))
                } else {
                    try character(into: &text)
                    if text.count > limits.text { throw fail("the text of <\(tag)> is over \(limits.text) bytes") }
                }
            }
        }

        /// One byte of character data, or one reference: the five predefined entities and `&#…;`.
        mutating func character(into output: inout [UInt8]) throws(TokenFormatError) {
            guard bytes[position] == UInt8(ascii: "&") else {
                output.append(bytes[position])
                position += 1
                return
            }
            let start = position
            guard let end = bytes[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw fail("an unterminated reference", at: start)
            }
            let reference = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
            position = end + 1
            switch reference {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(0x22)
            case "apos": output.append(0x27)
            default:
                var value: UInt32?
                if reference.hasPrefix("#x") {
                    value = UInt32(reference.dropFirst(2), radix: 16)
                } else if reference.hasPrefix("#") {
                    value = UInt32(reference.dropFirst(1))
                }
                guard let value, value > 0, let scalar = Unicode.Scalar(value) else {
                    throw fail("entity references other than the predefined ones are refused", at: start)
                }
                output += Array(String(Character(scalar)).utf8)
            }
        }
    }
}
