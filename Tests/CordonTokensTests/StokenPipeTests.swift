import CordonTokens
import Foundation
import Testing

/// stoken's own test cases (`tests/*.pipe` and `*.ref` of stoken-dev/stoken, copied under
/// vectors/stoken/upstream): each `.pipe` is a list of stoken command lines, the last one's output is
/// the `.ref`. `StokenPipe` interprets those command lines with CordonTokens instead of stoken.
@Suite("stoken's tests/*.pipe replayed through CordonTokens")
struct StokenPipeTests {
    /// Cases not replayed, with the reason.
    static let skipped: [String: String] = [:]

    static func cases() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: StokenPipe.directory.path)
        return names.filter { $0.hasSuffix(".pipe") }.map { String($0.dropLast(5)) }.sorted()
    }

    @Test("every upstream case is replayed (tokencode: the code; export: the reference output reads back)")
    func replayAll() throws {
        let names = try Self.cases()
        #expect(names.count == 10)
        #expect(Set(Self.skipped.keys).isSubset(of: Set(names)))
        var replayed: [String] = []
        for name in names where Self.skipped[name] == nil {
            let pipe = try StokenPipe(name: name)
            let outcome: StokenPipe.Outcome
            do {
                outcome = try pipe.run()
            } catch {
                Issue.record("\(name): \(error)")
                continue
            }
            switch outcome {
            case .output(let output): #expect(output == pipe.reference, "\(name)")
            case .sameToken(let expected, let actual): #expect(expected == actual, "\(name)")
            }
            replayed.append(name)
        }
        #expect(replayed.count + Self.skipped.count == names.count)
        // The four tokencode cases cover every token format CordonTokens reads, v4 included.
        for format in ["v2", "v3", "v4", "sdtid"] { #expect(replayed.contains("tokencode-\(format)")) }
    }

    @Test("v4: stoken's token (device-bound) gives its code only with its device id, and at its time")
    func v4Token() throws {
        let pipe = try StokenPipe(name: "tokencode-v4")
        let line = try #require(pipe.lines.first)
        let data = try #require(line.options["token"])
        let devid = try #require(line.options["devid"])
        let encoded = try CTFString.parse(data)
        guard case .binary(let binary) = encoded else {
            Issue.record("a v4 token is binary")
            return
        }
        #expect(binary.version == 4 && binary.deviceLocked && !binary.passwordLocked)
        let token = try SecurIDDecoder.decrypt(encoded, password: nil, deviceID: devid)
        #expect(token.digits == 6 && token.interval == 60 && token.pinMode == .pinPad)
        let code = try SecurIDCode.code(for: token, at: 1_650_391_605, pin: "1234")
        #expect(code.code == pipe.reference && code.secondsLeft == 60 - 1_650_391_605 % 60)
        #expect(code.next != code.code)
    }

    @Test("the expected errors around each tokencode case: no or wrong password, no or wrong device id, bad PIN")
    func derivedErrors() throws {
        for name in try Self.cases() where name.hasPrefix("tokencode-") {
            let pipe = try StokenPipe(name: name)
            let line = try #require(pipe.lines.first)
            let data = try line.tokenData()
            let password = line.options["password"]
            let devid = try line.deviceID()
            let time = Int64(line.options["use-time"] ?? "0") ?? 0
            func read(_ password: String?, _ devid: String?, pin: String? = nil, at now: Int64? = nil) throws {
                _ = try TokenImporter.read(
                    TokenImportRequest(data: data, password: password, deviceID: devid, pin: pin), now: now ?? time,
                    oathIDKey: [])
            }
            if let password {
                #expect(throws: TokenFormatError.passwordRequired, "\(name)") { try read(nil, devid) }
                #expect(throws: TokenFormatError.wrongPassword, "\(name)") { try read(password + "x", devid) }
            }
            // SDTID files name their device in the clear; v2–v4 tokens keep a hash of it.
            if let devid, !name.hasSuffix("sdtid") {
                #expect(throws: TokenFormatError.deviceIDRequired, "\(name)") { try read(password, nil) }
                let other = String(devid.dropLast()) + (devid.hasSuffix("0") ? "1" : "0")
                #expect(throws: TokenFormatError.wrongDevice, "\(name)") { try read(password, other) }
            }
            for pin in ["123", "123456789", "12a4"] {
                #expect(throws: TokenFormatError.self, "\(name) PIN \(pin)") { try read(password, devid, pin: pin) }
            }
            let token = try pipe.token(line)
            #expect(throws: TokenFormatError.expired(expiryDay: token.expiryDay), "\(name)") {
                try read(password, devid, at: token.expiry)
            }
            try read(password, devid, at: token.expiry - 1)
        }
    }

    @Test("a bit flipped in stoken's tokens is caught (checksum or MAC), never a different token")
    func garbledUpstream() throws {
        for name in ["tokencode-v2", "tokencode-v3", "tokencode-v4"] {
            let line = try #require(try StokenPipe(name: name).lines.first)
            let data = try line.tokenData()
            let query = try #require(data.range(of: "ctfData="))
            var characters = Array(data)
            let index = data.distance(from: data.startIndex, to: query.upperBound) + 40
            characters[index] = characters[index] == "2" ? "3" : "2"
            #expect(throws: TokenFormatError.self, "\(name)") {
                _ = try TokenImporter.read(
                    TokenImportRequest(
                        data: String(characters), password: line.options["password"], deviceID: line.options["devid"]),
                    now: 1_650_000_000, oathIDKey: [])
            }
        }
    }
}
