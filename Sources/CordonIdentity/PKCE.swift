import Crypto

/// A PKCE code verifier and its S256 challenge (RFC 7636 §4.1–4.2).
public struct PKCE: Sendable, Equatable {
    /// The verifier: 43 characters of base64url (32 random octets), sent only to the token endpoint.
    public let verifier: String
    /// `BASE64URL(SHA256(ASCII(verifier)))`, sent in the authorization request.
    public let challenge: String
    /// Always `S256` (`plain` is never used).
    public static let method = "S256"

    /// The pair for 32 octets of `random` (RFC 7636 §4.1: a 32-octet sequence, base64url-encoded).
    public init(random: [UInt8]) {
        precondition(random.count == 32, "PKCE takes 32 random octets")
        let verifier = Base64URL.encode(random)
        self.init(verifier: verifier)
    }

    /// The pair for a verifier already chosen.
    public init(verifier: String) {
        self.verifier = verifier
        challenge = Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
    }

    /// Whether `verifier` has the form RFC 7636 §4.1 allows: 43 to 128 unreserved characters.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            }
    }
}

/// Base64url without padding (RFC 4648 §5, RFC 7636 Appendix A).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url, without `=` padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let first = UInt32(bytes[index]) << 16
            let second = remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0
            let third = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let triple = first | second | third
            output.append(alphabet[Int(triple >> 18 & 0x3F)])
            output.append(alphabet[Int(triple >> 12 & 0x3F)])
            if remaining > 1 { output.append(alphabet[Int(triple >> 6 & 0x3F)]) }
            if remaining > 2 { output.append(alphabet[Int(triple & 0x3F)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
