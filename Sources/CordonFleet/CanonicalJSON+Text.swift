extension CanonicalJSON {
    /// The first control character of `text` (U+0000–U+001F, U+007F), if any: canonical JSON writes
    /// one raw and a strict reader refuses a raw one, so a signed file holding one would not read
    /// back. Such text is refused where it is read or issued, or written on one line.
    public static func firstControlCharacter(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isControl)
    }

    /// `text` with each control character replaced by a space (text of another's making, such as a
    /// server's error, kept on one line).
    public static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    /// How an error names `scalar`: `U+A`.
    public static func name(_ scalar: Unicode.Scalar) -> String {
        "U+" + String(scalar.value, radix: 16, uppercase: true)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }
}
