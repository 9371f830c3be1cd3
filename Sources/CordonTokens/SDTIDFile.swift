/// An RSA SDTID file (`<TKNBatch>` with `<TKNHeader>`, one `<TKN>` and `<TKNTrailer>`), read with
/// `BoundedXML`; field lookup as RSA's software does it (the token's field, else the header's
/// `Def<Field>`, else the header's field). `SDTIDDecoder` checks its MACs and decrypts the seed.
public struct SDTIDFile: Sendable, Equatable {
    public var header: XMLElement
    public var token: XMLElement
    public var trailer: XMLElement

    /// Reads an SDTID document (at most ``TokenInputLimit/bytes``); errors name the missing
    /// element or the XML offset.
    public static func parse(_ bytes: [UInt8]) throws(TokenFormatError) -> SDTIDFile {
        var limits = BoundedXML.Limits()
        limits.document = TokenInputLimit.bytes
        let root = try BoundedXML.parse(bytes, limits: limits)
        guard root.name == "TKNBatch" else {
            throw .invalidField(field: "TKNBatch", reason: "the root element is <\(root.name)>, not <TKNBatch>")
        }
        let tokens = root.children.filter { $0.name == "TKN" }
        guard let header = root.child("TKNHeader") else {
            throw .invalidField(field: "TKNHeader", reason: "the file has no <TKNHeader>")
        }
        guard let token = tokens.first else { throw .invalidField(field: "TKN", reason: "the file has no <TKN>") }
        guard tokens.count == 1 else {
            throw .invalidField(field: "TKN", reason: "the file holds \(tokens.count) tokens; import them one per file")
        }
        guard let trailer = root.child("TKNTrailer") else {
            throw .invalidField(field: "TKNTrailer", reason: "the file has no <TKNTrailer>")
        }
        return SDTIDFile(header: header, token: token, trailer: trailer)
    }

    /// The text of the first element named `name` below `element`, depth first (children before the
    /// element itself is compared), as RSA's lookup walks it.
    static func find(_ name: String, in element: XMLElement) -> String? {
        for child in element.children {
            if let found = find(name, in: child) { return found }
            if child.name == name { return child.allText }
        }
        return nil
    }

    /// The raw value of a field: the token's, else the header's `Def<name>`, else the header's `<name>`.
    public func lookup(_ name: String) -> String? {
        Self.find(name, in: token) ?? Self.find("Def\(name)", in: header) ?? Self.find(name, in: header)
    }

    /// A field trimmed of surrounding whitespace; the error names it when missing.
    public func string(_ name: String) throws(TokenFormatError) -> String {
        guard let value = lookup(name) else { throw .invalidField(field: name, reason: "the file has no <\(name)>") }
        return value.trimmingWhitespace()
    }

    /// An integer field (absent: `default`).
    public func integer(_ name: String, default value: Int) throws(TokenFormatError) -> Int {
        guard let text = lookup(name) else { return value }
        guard let number = Int(text.trimmingWhitespace()), abs(number) < 1_000_000_000 else {
            throw .invalidField(field: name, reason: "it is not an integer")
        }
        return number
    }

    /// A date field `YYYY/MM/DD` as days after 2000-01-01.
    public func day(_ name: String) throws(TokenFormatError) -> Int {
        let text = try string(name)
        let parts = text.split(separator: "/")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1970...2200).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { throw .invalidField(field: name, reason: "a date is YYYY/MM/DD") }
        return CivilDate(year: year, month: month, day: day).daysSinceUnixEpoch
            - Int(SecurIDToken.epoch / 86_400)
    }

    /// The serial number, left-padded with zeros to 12 digits (hardware token files drop them).
    public func serial() throws(TokenFormatError) -> String {
        let serial = try string("SN")
        guard (1...12).contains(serial.utf8.count),
            serial.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw .invalidField(field: "SN", reason: "a serial number is 1 to 12 digits") }
        return String(repeating: "0", count: 12 - serial.utf8.count) + serial
    }
}

extension XMLElement {
    /// The element's text and its descendants' in document order (what RSA's software reads as a value).
    var allText: String {
        children.isEmpty ? text : text + children.map(\.allText).joined()
    }
}
