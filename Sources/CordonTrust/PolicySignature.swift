import Foundation

/// A v2 policy signature, as `FILE.sig` carries it: the file name, serial and expiry it was
/// signed for, the signing key's id and the Ed25519 signature.
///
/// The `.sig` file (text, one `key=value` per line, in this order):
/// ```
/// cordon-policy-signature-v2
/// name=10-base.json
/// serial=42
/// expires=2027-01-01T00:00:00Z
/// key=67bbf37a1c6fd2cb
/// signature=<base64 64 bytes>
/// ```
/// The signed message is the canonical header followed by the file's exact bytes:
/// `cordon-policy-v2\nname=10-base.json\nserial=42\nexpires=2027-01-01T00:00:00Z\n` + bytes.
public struct PolicySignature: Sendable, Equatable {
    /// The file name (no directory) the signature is valid for.
    public var name: String
    /// The version number: the agent refuses a serial lower than one it accepted for `name`.
    public var serial: Int
    /// When the signature stops being valid, in seconds since 1970 (whole seconds, UTC).
    public var expires: Double
    /// The signing key's id.
    public var keyId: String
    /// The 64-byte Ed25519 signature.
    public var signature: Data

    static let tag = "cordon-policy-signature-v2"
    static let messageTag = "cordon-policy-v2"

    public init(name: String, serial: Int, expires: Double, keyId: String, signature: Data) {
        self.name = name
        self.serial = serial
        self.expires = expires
        self.keyId = keyId
        self.signature = signature
    }

    /// The expiry as written in the file: `2027-01-01T00:00:00Z`.
    public var expiresText: String { Self.format(expires) }

    /// The message signed for `document` under this header.
    public func message(for document: Data) -> Data {
        Self.message(name: name, serial: serial, expires: expires, document: document)
    }

    static func message(name: String, serial: Int, expires: Double, document: Data) -> Data {
        var message = Data("\(messageTag)\nname=\(name)\nserial=\(serial)\nexpires=\(format(expires))\n".utf8)
        message.append(document)
        return message
    }

    /// The `.sig` file text.
    public var text: String {
        "\(Self.tag)\nname=\(name)\nserial=\(serial)\nexpires=\(expiresText)\nkey=\(keyId)\n"
            + "signature=\(signature.base64EncodedString())\n"
    }

    /// Parses a `.sig` file's text. A v1 signature (`cordon-policy-signature-v1 …`, over the
    /// bytes alone) is refused as `.unsupportedVersion`.
    public static func parse(_ text: String) throws(PolicySignatureError) -> PolicySignature {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.first?.hasPrefix("cordon-policy-signature-v1") == true { throw .unsupportedVersion }
        let expected = ["name", "serial", "expires", "key", "signature"]
        let fields = lines.dropFirst().filter { !$0.isEmpty }
        guard lines.first == tag, fields.count == expected.count else {
            throw .malformed("expected \"\(tag)\" then the lines \(expected.map { $0 + "=" }.joined(separator: ", "))")
        }
        var values: [String] = []
        for (line, key) in zip(fields, expected) {
            guard line.hasPrefix(key + "=") else { throw .malformed("expected \"\(key)=\" where \"\(line)\" is") }
            values.append(String(line.dropFirst(key.count + 1)))
        }
        guard isValidName(values[0]) else { throw .malformed("name \"\(values[0])\" is not a file name") }
        guard let serial = parseSerial(values[1]) else {
            throw .malformed("serial \"\(values[1])\" is not a whole number from 0 to \(Int64.max)")
        }
        guard let expires = parseDate(values[2]) else {
            throw .malformed("expires \"\(values[2])\" is not a UTC time like 2027-01-01T00:00:00Z")
        }
        guard let signature = Data(base64Encoded: values[4]) else { throw .malformed("signature is not base64") }
        return PolicySignature(
            name: values[0], serial: serial, expires: expires, keyId: values[3], signature: signature)
    }

    /// A file name: not empty, no `/`, no control character, not `.` or `..`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/")
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// A decimal serial in 0...Int64.max, digits only.
    public static func parseSerial(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 19, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds) or a date `YYYY-MM-DD` (midnight UTC).
    public static func parseDate(_ text: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.count == 10 ? [.withFullDate] : [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        guard text.count == 10 || text.hasSuffix("Z"), let date = formatter.date(from: text) else { return nil }
        return date.timeIntervalSince1970
    }

    /// `seconds` since 1970 as `YYYY-MM-DDTHH:MM:SSZ`.
    public static func format(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }
}
