import CordonTokens
import Foundation
import Testing

/// One line of vectors/stoken/securid.jsonl.
struct SecurIDVector: Decodable {
    var format: String
    var token: String
    var password: String
    var devid: String
    var pin: String
    var time: Int64
    var code: String
}

/// Reads any format the way `cordon token import` will: SDTID when it looks like XML, else CTF.
func decodeSecurID(_ text: String, password: String?, deviceID: String?) throws(TokenFormatError) -> SecurIDToken {
    if text.contains("<") {
        return try SDTIDDecoder.decrypt(SDTIDFile.parse(Array(text.utf8)), password: password, deviceID: deviceID)
    }
    return try SecurIDDecoder.decrypt(CTFString.parse(text), password: password, deviceID: deviceID)
}

@Suite("SecurID: CTF v2/v3, SDTID and token codes")
struct SecurIDTests {
    static func vectors() throws -> [SecurIDVector] {
        let text = String(decoding: try Peer.vector("stoken/securid.jsonl"), as: UTF8.self)
        return try text.split(separator: "\n").map {
            try JSONDecoder().decode(SecurIDVector.self, from: Data($0.utf8))
        }
    }

    @Test("stoken's codes for v2, v2 URLs, v3 and SDTID tokens (30/60 s, 6/8 digits, PINs, passwords, device ids)")
    func stokenVectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count >= 100)
        for vector in vectors {
            let token = try decodeSecurID(
                vector.token, password: vector.password.isEmpty ? nil : vector.password,
                deviceID: vector.devid.isEmpty ? nil : vector.devid)
            let code = try SecurIDCode.code(for: token, at: vector.time, pin: vector.pin.isEmpty ? nil : vector.pin)
            #expect(code.code == vector.code, "\(vector.format) at \(vector.time)")
        }
    }

    @Test("the metadata: serial, digits, interval, PIN mode, expiry")
    func metadata() throws {
        let vectors = try Self.vectors()
        let short = try #require(vectors.first { $0.format == "v3-30s" && $0.pin.isEmpty })
        let token = try decodeSecurID(short.token, password: nil, deviceID: nil)
        #expect(token.digits == 6 && token.interval == 30 && token.pinMode == .pinless)
        #expect(token.expiryDay == "2036-01-01")
        let long = try #require(vectors.first { $0.format == "v2" })
        let v2 = try decodeSecurID(long.token, password: nil, deviceID: nil)
        #expect(v2.digits == 8 && v2.interval == 60 && v2.pinMode == .pinPad && v2.serial.count == 12)
    }

    @Test("a wrong or missing password and a wrong or missing device id are told apart")
    func wrongSecrets() throws {
        let vectors = try Self.vectors()
        for format in ["v2", "v3"] {
            let bound = try #require(vectors.first { $0.format == format && !$0.password.isEmpty })
            #expect(throws: TokenFormatError.passwordRequired) {
                try decodeSecurID(bound.token, password: nil, deviceID: bound.devid)
            }
            #expect(throws: TokenFormatError.deviceIDRequired) {
                try decodeSecurID(bound.token, password: bound.password, deviceID: nil)
            }
            #expect(throws: TokenFormatError.wrongDevice) {
                try decodeSecurID(
                    bound.token, password: bound.password, deviceID: "FEDCBA0987654321FEDCBA0987654321FEDCBA09")
            }
            #expect(throws: TokenFormatError.wrongPassword) {
                try decodeSecurID(bound.token, password: "not-it", deviceID: bound.devid)
            }
        }
        let sdtid = try #require(vectors.first { $0.format == "sdtid" && !$0.password.isEmpty })
        #expect(throws: TokenFormatError.passwordRequired) {
            try decodeSecurID(sdtid.token, password: nil, deviceID: nil)
        }
        #expect(throws: TokenFormatError.wrongPassword) { try decodeSecurID(sdtid.token, password: "x", deviceID: nil) }
    }

    @Test("a garbled CTF string fails its checksum; bad shapes name ctfData")
    func garbled() throws {
        let vectors = try Self.vectors()
        let v2 = try #require(vectors.first { $0.format == "v2" && $0.password.isEmpty }).token
        var digits = Array(v2)
        digits[30] = digits[30] == "1" ? "2" : "1"
        #expect(throws: TokenFormatError.checksumMismatch(field: "ctfData")) {
            try decodeSecurID(String(digits), password: nil, deviceID: nil)
        }
        let v3 = try #require(vectors.first { $0.format == "v3" && $0.password.isEmpty }).token
        var bytes = Array(v3)
        let index = bytes.count - 20
        bytes[index] = bytes[index] == "A" ? "B" : "A"
        #expect(throws: TokenFormatError.self) { try decodeSecurID(String(bytes), password: nil, deviceID: nil) }
        for bad in [
            "", "12345", String(repeating: "2", count: 90), "Zm9v", "http://x/ctf?other=1",
            "2" + String(repeating: "x", count: 80),
        ] {
            do {
                _ = try CTFString.parse(bad)
                Issue.record("\(bad) was accepted")
            } catch {
                guard case .invalidField("ctfData", _) = error else {
                    Issue.record("\(bad): \(error)")
                    continue
                }
            }
        }
    }

    @Test("PIN rules: 4 to 8 digits; PINPad adds, key fob prefixes, PINless takes none")
    func pins() throws {
        let vectors = try Self.vectors()
        let vector = try #require(vectors.first { $0.format == "v2" && $0.password.isEmpty })
        var token = try decodeSecurID(vector.token, password: nil, deviceID: nil)
        for bad in ["123", "123456789", "12a4"] {
            #expect(throws: TokenFormatError.self) { try SecurIDCode.code(for: token, at: 0, pin: bad) }
        }
        #expect(throws: TokenFormatError.self) { try SecurIDCode.code(for: token, at: 0, pin: nil) }
        let plain = SecurIDCode.raw(token, at: 1_700_000_000)
        token.pinMode = .keyFob
        let fob = try SecurIDCode.code(for: token, at: 1_700_000_000, pin: "4711")
        #expect(fob.code == "4711" + plain.map(String.init).joined())
        token.pinMode = .pinless
        #expect(throws: TokenFormatError.self) { try SecurIDCode.code(for: token, at: 0, pin: "1234") }
        let code = try SecurIDCode.code(for: token, at: 1_700_000_000, pin: nil)
        #expect(code.code == plain.map(String.init).joined())
        #expect(code.secondsLeft == 60 - Int(1_700_000_000 % 60))
    }

    @Test("the same codes as the stoken CLI for fresh tokens at random times and PINs")
    func stokenAgrees() throws {
        let stoken = try #require(Peer.which("stoken"), "stoken (Debian stoken) is not installed")
        var random = SplitMix64(state: 0x5ec0_1d)
        let exports: [(String, [String], String?, String?)] = [
            ("v2", [], nil, nil),
            (
                "v2 password+devid", ["--new-password=pw-x", "--new-devid=0123456789abcdef0123456789abcdef01234567"],
                "pw-x",
                "0123456789abcdef0123456789abcdef01234567"
            ),
            ("v3 password+devid", ["--v3", "--new-password=pw-y", "--new-devid=ABCDEF"], "pw-y", "ABCDEF"),
            ("sdtid password", ["--sdtid", "--new-password=pw-z"], "pw-z", nil),
        ]
        for (name, options, password, devid) in exports {
            let exported = try Peer.run(stoken, ["export", "--random", "--batch"] + options)
            #expect(exported.status == 0, "\(name)")
            let token = try decodeSecurID(exported.output, password: password, deviceID: devid)
            for _ in 0..<6 {
                let time = Int64.random(in: 946_684_800...4_000_000_000, using: &random)
                let pin = String(Int.random(in: 0...99_999_999, using: &random)).prefix(
                    Int.random(in: 4...8, using: &random))
                let pinText = String(repeating: "0", count: max(0, 4 - pin.count)) + pin
                var arguments = [
                    "tokencode", "--token=\(exported.output)", "--force", "--batch", "--use-time=\(time)",
                    "--pin=\(pinText)",
                ]
                if let password { arguments.append("--password=\(password)") }
                if let devid { arguments.append("--devid=\(devid)") }
                let peer = try Peer.run(stoken, arguments)
                #expect(peer.status == 0, "\(name)")
                #expect(
                    try SecurIDCode.code(for: token, at: time, pin: pinText).code == peer.output, "\(name) at \(time)")
            }
        }
    }
}

@Suite("SecurID: writing v3/v4 tokens, expiry")
struct SecurIDEncoderTests {
    /// What a token is, without the flag bits that record how it was protected.
    func essentials(_ token: SecurIDToken) -> [String] {
        [
            token.serial, token.seed.hex, "\(token.digits)", "\(token.interval)", token.pinMode.rawValue,
            "\(token.expiryDays)",
        ]
    }

    @Test("a v3 token we write reads in stoken with the same codes; v4 reads back and differs from v3")
    func writeAndReadBack() throws {
        let stoken = try #require(Peer.which("stoken"), "stoken (Debian stoken) is not installed")
        let vector = try #require(try SecurIDTests.vectors().first { $0.format == "v2" && $0.password.isEmpty })
        let token = try decodeSecurID(vector.token, password: nil, deviceID: nil)
        let nonce: [UInt8] = Array(100..<116)
        let device = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
        let v3 = try SecurIDEncoder.encodeBinary(token, version: 3, password: "pw-3", deviceID: device, nonce: nonce)
        let peer = try Peer.run(
            stoken,
            [
                "tokencode", "--token=http://127.0.0.1/securid/ctf?ctfData=\(v3)", "--password=pw-3",
                "--devid=\(device)",
                "--pin=2580", "--use-time=1800000000", "--force", "--batch",
            ])
        #expect(peer.status == 0)
        #expect(try SecurIDCode.code(for: token, at: 1_800_000_000, pin: "2580").code == peer.output)
        #expect(essentials(try decodeSecurID(v3, password: "pw-3", deviceID: device)) == essentials(token))

        let v4 = try SecurIDEncoder.encodeBinary(token, version: 4, password: "pw-4", deviceID: device, nonce: nonce)
        #expect(v4.hasPrefix("B"))
        #expect(essentials(try decodeSecurID(v4, password: "pw-4", deviceID: device)) == essentials(token))
        #expect(throws: TokenFormatError.wrongDevice) { try decodeSecurID(v4, password: "pw-4", deviceID: "ffff") }
        // The same bytes marked v3 fail: v4 derives its keys from the whole input, v3 from every second byte.
        var bytes = try Base64.decode(PercentEncoding.decode(Substring(v4), field: "ctfData"), field: "ctfData")
        bytes[0] = 3
        #expect(throws: TokenFormatError.self) {
            try decodeSecurID(Base64.encode(bytes), password: "pw-4", deviceID: device)
        }
    }

    @Test("expiry: usable until 00:00:00 UTC of the expiry date, refused from then on")
    func expiry() throws {
        let vector = try #require(try SecurIDTests.vectors().first { $0.format == "v3-30s" })
        let token = try decodeSecurID(vector.token, password: nil, deviceID: nil)
        #expect(token.expiry == 2_082_758_400)  // 2036-01-01T00:00:00Z
        try token.checkNotExpired(at: token.expiry - 1)
        #expect(throws: TokenFormatError.expired(expiryDay: "2036-01-01")) {
            try token.checkNotExpired(at: token.expiry)
        }
    }
}
