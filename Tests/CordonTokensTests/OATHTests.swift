import CordonTokens
import Foundation
import Testing

@Suite("OATH: HOTP and TOTP")
struct OATHTests {
    let rfcSecret = Array("12345678901234567890".utf8)

    @Test("RFC 4226 Appendix D: HOTP counters 0…9")
    func rfc4226() {
        let expected = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
        ]
        for (counter, code) in expected.enumerated() {
            #expect(OATHCode.hotp(secret: rfcSecret, counter: UInt64(counter), digits: 6, algorithm: .sha1) == code)
        }
    }

    @Test("RFC 6238 Appendix B: TOTP SHA1/256/512, 8 digits")
    func rfc6238() {
        let seeds: [OATHAlgorithm: [UInt8]] = [
            .sha1: Array("12345678901234567890".utf8),
            .sha256: Array("12345678901234567890123456789012".utf8),
            .sha512: Array("1234567890123456789012345678901234567890123456789012345678901234".utf8),
        ]
        let table: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, sha1, sha256, sha512) in table {
            for (algorithm, code) in [(OATHAlgorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
                let secret = seeds[algorithm] ?? []
                #expect(
                    OATHCode.totp(secret: secret, time: time, period: 30, digits: 8, algorithm: algorithm) == code,
                    "\(algorithm) at \(time)")
            }
        }
    }

    @Test("TOTP: current and next code and the seconds left")
    func currentAndNext() {
        let token = OATHToken(secret: rfcSecret, kind: .totp(period: 30), digits: 8)
        let code = OATHCode.code(for: token, at: 1_111_111_109)
        #expect(code.code == "07081804")
        #expect(code.next == "14050471")
        #expect(code.secondsLeft == 1)
        #expect(code.interval == 30)
    }

    @Test("the same codes as oathtool for random secrets, digits, periods, algorithms and times")
    func oathtoolAgrees() throws {
        let oathtool = try #require(Peer.which("oathtool"), "oathtool (Debian oathtool) is not installed")
        var random = SplitMix64(state: 0x7031_4e5a)
        for round in 0..<40 {
            let secret = (0..<Int.random(in: 10...64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let digits = Int.random(in: 6...8, using: &random)
            let algorithm = OATHAlgorithm.allCases.randomElement(using: &random) ?? .sha1
            if round % 4 == 0 {
                let counter = UInt64.random(in: 0...1_000_000_000, using: &random)
                let peer = try Peer.run(oathtool, ["-c", "\(counter)", "-d", "\(digits)", secret.hex])
                // oathtool's HOTP is SHA-1 only.
                #expect(
                    peer.output == OATHCode.hotp(secret: secret, counter: counter, digits: digits, algorithm: .sha1))
                continue
            }
            let period = Int.random(in: 1...300, using: &random)
            let time = Int64.random(in: 0...4_000_000_000, using: &random)
            let peer = try Peer.run(
                oathtool,
                [
                    "--totp=\(algorithm.rawValue.lowercased())", "--digits=\(digits)", "--time-step-size=\(period)s",
                    "--now=@\(time)", secret.hex,
                ])
            #expect(peer.status == 0)
            #expect(
                peer.output
                    == OATHCode.totp(secret: secret, time: time, period: period, digits: digits, algorithm: algorithm),
                "round \(round): \(algorithm) \(digits) digits, period \(period), time \(time)")
        }
    }
}
