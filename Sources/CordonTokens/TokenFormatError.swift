/// Why a token could not be read, decrypted or used: every case names what was wrong and where, and
/// none carries a secret (no seed, password, PIN or code ever appears in one).
public enum TokenFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A field of the input is missing or has a value that is not allowed (`field` names it:
    /// `secret`, `digits`, `period`, `ctfData`, `SN`, …).
    case invalidField(field: String, reason: String)
    /// A binary or XML structure is malformed at this byte offset (`format`: `protobuf`, `xml`, `base64`).
    case malformed(format: String, offset: Int, reason: String)
    /// A checksum or MAC over the input does not match: the input was garbled or altered.
    case checksumMismatch(field: String)
    /// The token is protected by a password and none was given.
    case passwordRequired
    /// The password does not decrypt the token.
    case wrongPassword
    /// The token is bound to a device and no device id was given.
    case deviceIDRequired
    /// The token is bound to another device.
    case wrongDevice
    /// The token has expired (at 00:00:00 UTC of its expiry date).
    case expired(expiryDay: String)
    /// The token needs a PIN (4 to 8 digits) and none, or a malformed one, was given.
    case invalidPIN(reason: String)

    public var description: String {
        switch self {
        case .invalidField(let field, let reason): "invalid \(field): \(reason)"
        case .malformed(let format, let offset, let reason): "malformed \(format) at byte \(offset): \(reason)"
        case .checksumMismatch(let field): "the checksum of \(field) does not match (garbled or altered input)"
        case .passwordRequired: "the token is protected by a password and none was given"
        case .wrongPassword: "the password does not decrypt the token"
        case .deviceIDRequired: "the token is bound to a device and no device id was given"
        case .wrongDevice: "the token is bound to another device"
        case .expired(let day): "the token expired on \(day) (00:00:00 UTC)"
        case .invalidPIN(let reason): "invalid PIN: \(reason)"
        }
    }
}
