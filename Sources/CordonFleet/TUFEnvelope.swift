import CordonProtocol
import Foundation

/// One metadata file: the canonical bytes of `signed` (what the signatures cover), its fields, the
/// common header (`_type`, `version`, `expires`) and the signatures.
public struct TUFEnvelope: Sendable {
    /// One signature: the key id it claims and the signature bytes.
    public struct Signature: Sendable, Hashable {
        public var keyID: String
        public var bytes: [UInt8]
    }

    /// The canonical JSON of the `signed` object.
    public let signedBytes: [UInt8]
    /// The file's bytes as served.
    public let raw: [UInt8]
    /// The signatures, as listed.
    public let signatures: [Signature]
    /// The `version`.
    public let version: Int
    /// The `expires`.
    public let expires: Date

    /// Parses a metadata file that must be of `type` (`root`, `timestamp`, `snapshot`, `targets`);
    /// returns the envelope and the `signed` object's fields, which the role reads and drops (a
    /// machine keeps the bytes and the parsed role, not the JSON tree).
    static func parse(_ bytes: [UInt8], type: String, role: String) throws(TUFError) -> (TUFEnvelope, TUFFields) {
        let document = try TUFFields(CanonicalJSON.parse(bytes, role: role), at: "", role: role)
        let signed = try document.object("signed")
        let declared = try signed.string("_type")
        guard declared == type else {
            throw TUFError(.malformed, role: role, "/signed/_type is \"\(declared)\", not \"\(type)\"")
        }
        let spec = try signed.string("spec_version")
        guard spec.split(separator: ".").first == "1" else {
            throw TUFError(.malformed, role: role, "/signed/spec_version is \"\(spec)\"; this client reads 1.x")
        }
        var signatures: [Signature] = []
        for (index, element) in try document.array("signatures").enumerated() {
            let fields = try TUFFields(element, at: "/signatures/\(index)", role: role)
            signatures.append(Signature(keyID: try fields.string("keyid"), bytes: try fields.hex("sig")))
        }
        let envelope = TUFEnvelope(
            signedBytes: try CanonicalJSON.encode(signed.value, role: role), raw: bytes, signatures: signatures,
            version: try signed.version(), expires: try signed.date("expires"))
        return (envelope, signed)
    }

    private init(signedBytes: [UInt8], raw: [UInt8], signatures: [Signature], version: Int, expires: Date) {
        self.signedBytes = signedBytes
        self.raw = raw
        self.signatures = signatures
        self.version = version
        self.expires = expires
    }

    /// Whether the metadata is expired at `now` (TUF: expired when `now` is at or after `expires`).
    func isExpired(at now: Date) -> Bool { now >= expires }
}
