/// Why a policy signature was not accepted.
public enum PolicySignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Keys are trusted but the file has no `.sig`.
    case missing
    case malformed(String)
    /// A v1 signature: over the bytes alone, so it could be renamed, rolled back and never expired.
    case unsupportedVersion
    /// Signed by a key that is not in the trust directory.
    case untrustedKey(String)
    /// The signature does not match the file (tampered, or signed by another key with that id).
    case invalid(String)
    /// Signed for another file name (a signed file installed under another name).
    case wrongName(signed: String, installed: String)
    /// The signature's expiry (as written in the `.sig`) has passed.
    case expired(String)
    /// A serial lower than the highest one accepted for this file name (a rollback).
    case rollback(serial: Int, highest: Int)

    public var description: String {
        switch self {
        case .missing: return "no signature (FILE.sig) although /etc/cordon/trust holds keys"
        case .malformed(let detail): return "malformed: \(detail)"
        case .unsupportedVersion:
            return "a v1 signature (it names neither the file nor a serial nor an expiry) is no longer "
                + "accepted; sign again with `cordon policy sign`"
        case .untrustedKey(let id): return "signed by key \(id), which is not trusted"
        case .invalid(let id): return "the signature by key \(id) does not match the file (tampered?)"
        case .wrongName(let signed, let installed):
            return "signed for the file \(signed), installed as \(installed) (renamed?)"
        case .expired(let expires): return "the signature expired at \(expires)"
        case .rollback(let serial, let highest):
            return "serial \(serial) is lower than serial \(highest), already accepted for this file (rollback?)"
        }
    }
}
