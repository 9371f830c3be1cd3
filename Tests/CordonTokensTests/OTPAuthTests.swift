import CordonTokens
import Foundation
import Testing

@Suite("otpauth:// and otpauth-migration:// URIs")
struct OTPAuthTests {
    @Test("a full TOTP URI: issuer, label, algorithm, digits, period")
    func totpURI() throws {
        let token = try OTPAuthURI.parse(
            "otpauth://totp/ACME%20Co:john.doe@email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ&issuer=ACME%20Co&algorithm=SHA256&digits=7&period=45"
        )
        #expect(token.issuer == "ACME Co")
        #expect(token.account == "john.doe@email.com")
        #expect(token.algorithm == .sha256)
        #expect(token.digits == 7)
        #expect(token.kind == .totp(period: 45))
        #expect(Base32.encode(token.secret, padded: false) == "HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ")
    }

    @Test("HOTP needs a counter; defaults are SHA1, 6 digits, 30 s")
    func hotpAndDefaults() throws {
        let hotp = try OTPAuthURI.parse("otpauth://hotp/Example?secret=JBSWY3DPEHPK3PXP&counter=42")
        #expect(hotp.kind == .hotp(counter: 42))
        #expect(hotp.algorithm == .sha1 && hotp.digits == 6)
        let totp = try OTPAuthURI.parse("OTPAUTH://TOTP/x?secret=jbswy3dpehpk3pxp")
        #expect(totp.kind == .totp(period: 30))
        #expect(throws: TokenFormatError.invalidField(field: "counter", reason: "an hotp URI needs a counter")) {
            try OTPAuthURI.parse("otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP")
        }
    }

    @Test("secrets with and without base32 padding decode the same")
    func padding() throws {
        let secret: [UInt8] = Array(0..<13)
        let padded = Base32.encode(secret)
        #expect(padded.hasSuffix("==="))
        #expect(try Base32.decode(padded) == secret)
        #expect(try Base32.decode(String(padded.dropLast(3))) == secret)
        #expect(throws: TokenFormatError.self) { try Base32.decode(String(padded.dropLast(1))) }
    }

    @Test(
        "malformed URIs name the field",
        arguments: [
            ("https://totp/x?secret=JBSWY3DP", "scheme"),
            ("otpauth://totp/x", "secret"),
            ("otpauth://totp/x?secret=JBSWY3D1", "secret"),
            ("otpauth://totp/x?secret=JBSWY3DP&digits=9", "digits"),
            ("otpauth://totp/x?secret=JBSWY3DP&digits=six", "digits"),
            ("otpauth://totp/x?secret=JBSWY3DP&period=0", "period"),
            ("otpauth://totp/x?secret=JBSWY3DP&algorithm=MD5", "algorithm"),
            ("otpauth://motp/x?secret=JBSWY3DP", "type"),
            ("otpauth://totp/x%G1?secret=JBSWY3DP", "label"),
            ("otpauth://totp/x?secret=JBSWY3DP&secret=JBSWY3DP", "secret"),
            ("otpauth://hotp/x?secret=JBSWY3DP&counter=-1", "counter"),
        ])
    func malformed(uri: String, field: String) {
        do {
            _ = try OTPAuthURI.parse(uri)
            Issue.record("\(uri) was accepted")
        } catch {
            guard case .invalidField(let named, _) = error else {
                Issue.record("\(uri): \(error)")
                return
            }
            #expect(named == field, "\(uri)")
        }
    }

    @Test("labels and issuers are bounded and read back whole (regression: a fuzzer's label grew past the URI limit)")
    func labelsRoundTrip() throws {
        let long = String(repeating: "%3E", count: 300)
        #expect(throws: TokenFormatError.invalidField(field: "label", reason: "the account is longer than 256 bytes")) {
            try OTPAuthURI.parse("otpauth://totp/\(long)?secret=JBSWY3DPEHPK3PXP")
        }
        for uri in [
            "otpauth://totp/a:b:c?secret=JBSWY3DPEHPK3PXP",
            "otpauth://totp/%3Ab:c?secret=JBSWY3DPEHPK3PXP",
            "otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP&issuer=p:q",
            "otpauth://totp/p:q:y?secret=JBSWY3DPEHPK3PXP&issuer=p:q",
            "otpauth://totp/%20%20b?secret=JBSWY3DPEHPK3PXP&issuer=I",
        ] {
            let token = try OTPAuthURI.parse(uri)
            #expect(try OTPAuthURI.parse(token.keyURI) == token, "\(uri)")
        }
        #expect(try OTPAuthURI.parse("otpauth://totp/p:q:y?secret=JBSWY3DPEHPK3PXP&issuer=p:q").account == "y")
    }

    @Test("known Google Authenticator batches (extract_otp_secrets' example_export.txt)")
    func knownBatches() throws {
        let lines = String(decoding: try Peer.vector("otpauth-migration/example_export.txt"), as: UTF8.self)
            .split(separator: "\n").filter { $0.hasPrefix("otpauth-migration://") }
        #expect(lines.count == 5)
        let batches = try lines.map { try MigrationPayload.parse(uri: String($0)) }
        #expect(batches.map(\.count) == [1, 1, 2, 1, 1])
        for token in batches.flatMap({ $0 }) {
            #expect(Base32.encode(token.secret, padded: false) == "7KSQL2JTUDIS5EF65KLMRQIIGY")
            #expect(token.digits == 6 && token.algorithm == .sha1)
        }
        #expect(batches[0][0].account == "pi@raspberrypi" && batches[0][0].issuer == "raspberrypi")
        #expect(batches[1][0].issuer == "")
        #expect(batches[3][0].kind == .hotp(counter: 4) && batches[3][0].account == "hotp demo")
        #expect(batches[4][0].issuer == "encoding" && batches[4][0].account == "¿äÄéÉ? (demo)")
    }

    @Test("a batch of several entries with 13-byte secrets: same codes as oathtool with the padded base32")
    func thirteenByteSecrets() throws {
        let oathtool = try #require(Peer.which("oathtool"), "oathtool (Debian oathtool) is not installed")
        var random = SplitMix64(state: 13)
        let secrets = (0..<3).map { _ in (0..<13).map { _ in UInt8.random(in: 0...255, using: &random) } }
        var payload: [UInt8] = []
        for (index, secret) in secrets.enumerated() {
            var entry: [UInt8] = [0x0a, 13] + secret
            let name = Array("user\(index)@example.com".utf8)
            entry += [0x12, UInt8(name.count)] + name
            entry += [0x1a, 7] + Array("Example".utf8)
            entry += [0x20, 1, 0x28, 1, 0x30, 2]  // SHA1, 6 digits, TOTP
            entry += [0x50, 0x99, 0x01]  // an unknown field (10), skipped
            payload += [0x0a, UInt8(entry.count)] + entry
        }
        payload += [0x10, 1, 0x18, 1, 0x20, 0, 0x28, 0x7b]  // version, batch size, index, id
        let uri = "otpauth-migration://offline?data=" + PercentEncoding.encode(Base64.encode(payload))
        let tokens = try MigrationPayload.parse(uri: uri)
        #expect(tokens.count == 3)
        for (token, secret) in zip(tokens, secrets) {
            #expect(token.secret == secret)
            let reparsed = try OTPAuthURI.parse(token.keyURI)
            #expect(reparsed == token)
            let base32 = Base32.encode(token.secret)
            #expect(base32.hasSuffix("==="))
            let peer = try Peer.run(oathtool, ["-b", "--totp", "--now=@1700000000", base32])
            #expect(
                peer.output
                    == OATHCode.totp(secret: secret, time: 1_700_000_000, period: 30, digits: 6, algorithm: .sha1))
        }
    }

    @Test(
        "malformed protobuf is refused with the byte offset",
        arguments: [
            ([0x0a, 0x05, 0x0a, 0x10] as [UInt8], 1),  // outer length runs past the end
            ([0x0a, 0x03, 0x0a, 0x10, 0x00], 3),  // inner length runs past its message
            ([0x08, 0x80], 1),  // truncated varint
            ([0x0b], 0),  // wire type 3 (groups)
            ([0x10, 0x01, 0x00], 2),  // field number 0
            ([0x0a, 0x02, 0x20, 0x09], 2),  // algorithm 9
            ([0x0a, 0x02, 0x12, 0x00], 0),  // an account without a secret
            ([0x0d, 0x01, 0x02], 1),  // truncated fixed32
        ])
    func malformedProtobuf(bytes: [UInt8], offset: Int) {
        do {
            _ = try MigrationPayload.parse(payload: bytes)
            Issue.record("\(bytes) was accepted")
        } catch {
            guard case .malformed("protobuf", let at, _) = error else {
                Issue.record("\(bytes): \(error)")
                return
            }
            #expect(at == offset, "\(bytes): \(error)")
        }
    }

    @Test("a migration URI without data, or with bad base64, names data")
    func badMigrationURI() {
        #expect(throws: TokenFormatError.self) { try MigrationPayload.parse(uri: "otpauth-migration://offline?x=1") }
        #expect(throws: TokenFormatError.self) {
            try MigrationPayload.parse(uri: "otpauth-migration://offline?data=%%%")
        }
        #expect(throws: TokenFormatError.self) {
            try MigrationPayload.parse(uri: "otpauth-migration://offline?data=Cg$=")
        }
    }
}
