/// An age v1 header: the version line, one or more stanzas and the MAC line
/// (`--- ` + base64 HMAC-SHA-256 under HKDF(file key, "header") of everything up to `---`).
public struct AgeHeader: Equatable, Sendable {
    /// Body lines are wrapped at this many columns.
    static let columns = 64
    static let versionLine = Array("age-encryption.org/v1\n".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let macMark = Array("---".utf8)

    /// The stanzas, in order.
    public var stanzas: [AgeStanza]
    /// The 32-byte MAC from the last line.
    public var mac: [UInt8]
    /// The bytes the MAC covers: the header as read, up to and including `---`.
    public var authenticatedBytes: [UInt8]
}
