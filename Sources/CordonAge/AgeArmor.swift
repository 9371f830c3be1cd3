/// The ASCII armor of age files: strict PEM (RFC 7468 §3, Figure 3) with the label
/// "AGE ENCRYPTED FILE", padded canonical base64 in 64-column lines. Both directions stream.
public enum AgeArmor {
    static let beginLine = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let endLine = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    /// Binary bytes per full armor line (64 base64 characters).
    static let bytesPerLine = 48
    static let columns = 64
    /// Whitespace tolerated before and after the PEM block.
    static let maximumWhitespace = 1024

    /// True when `byte` is ASCII whitespace (space, tab, LF, VT, FF, CR).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// True when `prefix` (the first bytes of a file) starts, after optional whitespace, like
    /// an armored file rather than a binary one.
    public static func looksArmored(_ prefix: some Collection<UInt8>) -> Bool {
        let body = prefix.drop(while: isWhitespace)
        let marker = beginLine.prefix(min(body.count, beginLine.count))
        return !body.isEmpty && body.starts(with: marker)
    }

    /// Armors a whole age file.
    public static func armor(_ file: [UInt8]) -> [UInt8] {
        var encoder = AgeArmorEncoder()
        var output = encoder.update(file)
        output += encoder.finish()
        return output
    }

    /// Removes the armor from a whole armored file.
    public static func dearmor(_ text: [UInt8]) throws(AgeError) -> [UInt8] {
        var decoder = AgeArmorDecoder()
        var output = try decoder.update(text)
        output += try decoder.finish()
        return output
    }
}

/// Streams binary bytes into ASCII armor, holding less than one line.
public struct AgeArmorEncoder: Sendable {
    private var started = false
    private var partial: [UInt8] = []

    /// An encoder; the BEGIN line comes with the first output.
    public init() {}

    /// Armors `input`, returning the complete lines.
    public mutating func update(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        if !started {
            output = AgeArmor.beginLine + [0x0A]
            started = true
        }
        var rest = input[...]
        while !rest.isEmpty {
            let take = min(AgeArmor.bytesPerLine - partial.count, rest.count)
            partial += rest.prefix(take)
            rest = rest.dropFirst(take)
            if partial.count == AgeArmor.bytesPerLine {
                output += AgeBase64.encode(partial, padded: true) + [0x0A]
                partial.removeAll(keepingCapacity: true)
            }
        }
        return output
    }

    /// The last short line, if any, and the END line.
    public mutating func finish() -> [UInt8] {
        var output = started ? [] : AgeArmor.beginLine + [0x0A]
        if !partial.isEmpty { output += AgeBase64.encode(partial, padded: true) + [0x0A] }
        partial = []
        return output + AgeArmor.endLine + [0x0A]
    }
}
