import Foundation

@testable import CordonAge

#if !CORDON_FUZZER
    import Testing
#endif

// The invariants the `age-header` libFuzzer target in `Fuzz/` asserts. This file is compiled
// twice: into the test target (the suite at the end replays the committed corpus through these
// checks) and, with `-D CORDON_FUZZER`, into the fuzzer by `scripts/fuzz.sh`, which builds only
// CordonAge's parsing files (no swift-crypto): so only the header parser, base64, Bech32 and the
// armor are used here. Each check returns nil when every invariant holds.

/// An age header and ASCII armor from untrusted bytes.
enum AgeHeaderFuzzCheck {
    static func check(_ input: [UInt8]) -> String? {
        if let problem = header(input) { return "header: \(problem)" }
        if let problem = armor(input) { return "armor: \(problem)" }
        if let problem = bech32(input) { return "bech32: \(problem)" }
        return nil
    }

    /// A header parses to exactly its canonical encoding, or fails as a header failure; a prefix
    /// shorter than the header asks for more bytes, a longer one gives the same header.
    static func header(_ input: [UInt8]) -> String? {
        let whole: (header: AgeHeader, length: Int)?
        do throws(AgeError) {
            whole = try AgeHeaderParser.parse(input, atEnd: true)
        } catch {
            return error.failureClass == .header ? nil : "\(error) is not a header failure"
        }
        guard let (header, length) = whole else { return "nil at the end of the input" }
        var encoded = AgeHeader.versionLine
        for stanza in header.stanzas { encoded += stanza.encoded() }
        encoded += AgeHeader.macMark
        guard encoded == header.authenticatedBytes else { return "the MAC input is not the canonical encoding" }
        encoded += [0x20] + AgeBase64.encode(header.mac, padded: false) + [0x0A]
        guard encoded == Array(input[..<length]) else { return "the header is not its canonical encoding" }
        let cut = Int(input.first ?? 0) % max(1, length)
        do throws(AgeError) {
            guard try AgeHeaderParser.parse(input[..<cut], atEnd: false) == nil else {
                return "a prefix of \(cut) bytes parsed as a whole header"
            }
            guard let again = try AgeHeaderParser.parse(input, atEnd: false), again.header == header,
                again.length == length
            else { return "parsing before the end disagrees" }
        } catch {
            return "a prefix or the input before its end threw \(error)"
        }
        return nil
    }

    /// Decoding the armor whole and in pieces agrees; what decodes armors back to itself.
    static func armor(_ input: [UInt8]) -> String? {
        let whole: Result<[UInt8], AgeError> = Result { () throws(AgeError) in try AgeArmor.dearmor(input) }
        var decoder = AgeArmorDecoder()
        let step = Int(input.last ?? 1) % 17 + 1
        let pieces: Result<[UInt8], AgeError> = Result { () throws(AgeError) in
            var output: [UInt8] = []
            var offset = 0
            while offset < input.count {
                output += try decoder.update(Array(input[offset..<min(input.count, offset + step)]))
                offset += step
            }
            return output + (try decoder.finish())
        }
        switch (whole, pieces) {
        case (.success(let a), .success(let b)):
            guard a == b else { return "whole and piecewise decoding differ" }
            guard (try? AgeArmor.dearmor(AgeArmor.armor(a))) == a else { return "re-armoring changed the bytes" }
        case (.failure(let error), .failure):
            guard error.failureClass == .armor else { return "\(error) is not an armor failure" }
        default:
            return "whole and piecewise decoding disagree on success"
        }
        return nil
    }

    /// A Bech32 string that decodes encodes back to itself (in lower case).
    static func bech32(_ input: [UInt8]) -> String? {
        let text = String(decoding: input.prefix(200), as: UTF8.self)
        guard let (hrp, data) = try? Bech32.decode(text) else { return nil }
        return Bech32.encode(hrp: hrp, data: data) == text.lowercased() ? nil : "did not round-trip"
    }
}

#if !CORDON_FUZZER
    @Suite("Fuzz corpus: age-header")
    struct AgeHeaderFuzzRegressionTests {
        /// `Fuzz/corpus/age-header/` and `Fuzz/regressions/age-header/` files, by path.
        static let inputs: [String] = {
            let root = AgeTestSupport.suiteDirectory.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz")
            return ["corpus", "regressions"].flatMap { kind -> [String] in
                let directory = root.appendingPathComponent(kind).appendingPathComponent("age-header")
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0).path }
            }
        }()

        @Test func theCorpusHoldsVectorSeeds() {
            #expect(Self.inputs.count >= 20)
        }

        @Test(arguments: inputs)
        func inputKeepsTheInvariants(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(AgeHeaderFuzzCheck.check(bytes) == nil)
        }
    }
#endif
