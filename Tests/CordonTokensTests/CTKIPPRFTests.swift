import Foundation
import Testing

@testable import CordonTokens

/// CT-KIP's PRF and key derivation against RFC 4493's AES-CMAC vectors and the exchange captured
/// from RSA's own software (R_C, R_S, the server modulus and the MAC it sent), as published in
/// rgerganov/ctkip's Main.java and repeated in rsa-ct-kip's ct_kip_prf_aes.py.
@Suite("CT-KIP: AES-CMAC and CT-KIP-PRF-AES as RSA computes them")
struct CTKIPPRFTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var output: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            output.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return output
    }

    @Test("RFC 4493 section 4: the four AES-128-CMAC examples")
    func cmacVectors() {
        let key = Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let message = Self.bytes(
            "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
        let expected = [
            (0, "bb1d6929e95937287fa37d129b756746"), (16, "070a16b46b4d4144f79bdd9dd04a287c"),
            (40, "dfa66747de9ae63030ca32611497c827"), (64, "51f0bebf7e3b9d92fc49741779363cfe"),
        ]
        for (length, mac) in expected {
            #expect(CTKIPPRF.cmac(key: key, Array(message.prefix(length))) == Self.bytes(mac), "\(length) bytes")
        }
    }

    @Test("RSA's captured exchange: the derived token key gives the MAC RSA's server sent")
    func rsaExchange() throws {
        let clientNonce = Self.bytes("846cd036914f3bf536e7354ece07b35a")
        let serverNonce = Self.bytes("79956b2fd8502465ad5c5fe99b9e7786")
        let modulus = try Base64.decode(
            "1np1DIf3HOHAK2ahcRzZCJsqIC1QMEqtsdanKSEn5CGtLCdLv9LbLUYo6cQxKSJtwvigpeDgBAb/UYcUNXy/7dY7rA5WpYlsaA9h5C9qzPMBHxVGSIe5k61uUbAwdFhCMfLh776wR//VZ7cuypo5d3cCbvgHGwqw4ZuECbKvONM=",
            field: "modulus")
        #expect(modulus.count == 128)
        let key = CTKIPPRF.tokenKey(clientNonce: clientNonce, serverModulus: modulus, serverNonce: serverNonce)
        #expect(key.count == 16)
        let mac = CTKIPPRF.serverMAC(tokenKey: key, clientNonce: clientNonce)
        #expect(mac == Self.bytes("eca98d8e5bf211fb5167dada9c262296"))
        // Another client nonce gives another key, whose MAC does not match.
        var other = clientNonce
        other[0] ^= 1
        let otherKey = CTKIPPRF.tokenKey(clientNonce: other, serverModulus: modulus, serverNonce: serverNonce)
        #expect(otherKey != key)
        #expect(CTKIPPRF.serverMAC(tokenKey: otherKey, clientNonce: other) != mac)
        // Longer outputs continue the counter: the first block is the 16-byte output.
        let long = CTKIPPRF.derive(key: clientNonce, message: [1, 2, 3], length: 40)
        #expect(long.count == 40 && Array(long.prefix(16)) == CTKIPPRF.derive(key: clientNonce, message: [1, 2, 3]))
    }
}
