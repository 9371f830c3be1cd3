/// The sealed form of a `TokenRecord`: a version byte, then length-prefixed fields. Only ever
/// stored inside a `RecordSealer` record.
extension TokenRecord {
    private static let version: UInt8 = 1

    /// The record's bytes (secret: seal them, never store them as they are).
    public func encoded() -> [UInt8] {
        var writer = FieldWriter()
        writer.bytes([Self.version])
        writer.text(serial)
        writer.text(pin ?? "")
        switch secret {
        case .securID(let token):
            writer.text("securid")
            writer.text(token.serial)
            writer.bytes(token.seed)
            writer.number(UInt64(token.digits))
            writer.number(UInt64(token.interval))
            writer.text(token.pinMode.rawValue)
            writer.number(UInt64(bitPattern: Int64(token.expiryDays)))
            writer.number(UInt64(token.flags))
        case .oath(let token):
            writer.text("oath")
            writer.bytes(token.secret)
            switch token.kind {
            case .hotp(let counter):
                writer.text("hotp")
                writer.number(counter)
            case .totp(let period):
                writer.text("totp")
                writer.number(UInt64(period))
            }
            writer.text(token.algorithm.rawValue)
            writer.number(UInt64(token.digits))
            writer.text(token.issuer)
            writer.text(token.account)
        }
        return writer.output
    }

    /// Reads `encoded()`; a record that does not read is `invalidField("record", …)`.
    public static func decode(_ bytes: [UInt8]) throws(TokenFormatError) -> TokenRecord {
        var reader = FieldReader(input: bytes)
        guard try reader.bytes() == [version] else {
            throw .invalidField(field: "record", reason: "unknown record version")
        }
        let serial = try reader.text()
        let pinText = try reader.text()
        let pin = pinText.isEmpty ? nil : pinText
        switch try reader.text() {
        case "securid":
            let tokenSerial = try reader.text()
            let seed = try reader.bytes()
            let digits = Int(try reader.number())
            let interval = Int(try reader.number())
            guard let mode = SecurIDPINMode(rawValue: try reader.text()) else {
                throw .invalidField(field: "record", reason: "unknown PIN mode")
            }
            let expiryDays = Int(Int64(bitPattern: try reader.number()))
            let flags = UInt16(truncatingIfNeeded: try reader.number())
            let token = SecurIDToken(
                serial: tokenSerial, seed: seed, digits: digits, interval: interval, pinMode: mode,
                expiryDays: expiryDays, flags: flags)
            return TokenRecord(serial: serial, secret: .securID(token), pin: pin)
        case "oath":
            let secret = try reader.bytes()
            let kind: OATHKind
            switch try reader.text() {
            case "hotp": kind = .hotp(counter: try reader.number())
            case "totp": kind = .totp(period: Int(try reader.number()))
            default: throw .invalidField(field: "record", reason: "unknown OATH kind")
            }
            guard let algorithm = OATHAlgorithm(rawValue: try reader.text()) else {
                throw .invalidField(field: "record", reason: "unknown algorithm")
            }
            let digits = Int(try reader.number())
            let token = OATHToken(
                secret: secret, kind: kind, algorithm: algorithm, digits: digits, issuer: try reader.text(),
                account: try reader.text())
            return TokenRecord(serial: serial, secret: .oath(token), pin: pin)
        default:
            throw .invalidField(field: "record", reason: "unknown token kind")
        }
    }
}

private struct FieldWriter {
    var output: [UInt8] = []

    mutating func number(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    mutating func bytes(_ value: [UInt8]) {
        number(UInt64(value.count))
        output += value
    }

    mutating func text(_ value: String) { bytes(Array(value.utf8)) }
}

private struct FieldReader {
    let input: [UInt8]
    var position = 0

    mutating func number() throws(TokenFormatError) -> UInt64 {
        guard input.count - position >= 8 else { throw .invalidField(field: "record", reason: "truncated") }
        var value: UInt64 = 0
        for _ in 0..<8 {
            value = value << 8 | UInt64(input[position])
            position += 1
        }
        return value
    }

    mutating func bytes() throws(TokenFormatError) -> [UInt8] {
        Array(input[try field()])
    }

    /// Decoded where it lies, without a copy. `String(validating:as:)` runs the standard library's
    /// generic validation, unspecialized (1.3% of the agent's samples per `Tokens.Code`,
    /// docs/PERFORMANCE.md, "Cross-module optimization"); `String(decoding:as:)` of a buffer takes
    /// its fast path, and repairs what is not UTF-8, so the text is UTF-8 exactly when its bytes
    /// are the field's.
    mutating func text() throws(TokenFormatError) -> String {
        let range = try field()
        let text = input.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self)
        }
        guard text.utf8.elementsEqual(input[range]) else {
            throw .invalidField(field: "record", reason: "a text field is not UTF-8")
        }
        return text
    }

    /// The next length-prefixed field's place in `input`.
    private mutating func field() throws(TokenFormatError) -> Range<Int> {
        let count = try number()
        guard count <= UInt64(input.count - position) else {
            throw .invalidField(field: "record", reason: "truncated")
        }
        defer { position += Int(count) }
        return position..<position + Int(count)
    }
}
