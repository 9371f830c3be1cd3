import CordonIdentity
import Testing

@Suite("PKCE (RFC 7636)")
struct PKCETests {
    /// RFC 7636 Appendix B: the 32 octets, the verifier they encode to and its S256 challenge.
    static let appendixBOctets: [UInt8] = [
        116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240,
        91, 88, 5, 88, 83, 132, 141, 121,
    ]

    @Test("the Appendix B octets give the Appendix B verifier and challenge")
    func appendixB() {
        let pair = PKCE(random: Self.appendixBOctets)
        #expect(pair.verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pair.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.method == "S256")
        #expect(PKCE.isValidVerifier(pair.verifier))
    }

    @Test("verifiers outside 43...128 unreserved characters are refused")
    func verifierForm() {
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42)))
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 128)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 129)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "+"))
    }

    @Test("base64url has no padding and uses - and _")
    func base64url() {
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.encode([0xFB]) == "-w")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode(Array("foobar".utf8)) == "Zm9vYmFy")
    }
}
