import Foundation

@testable import CordonTokens

#if !CORDON_FUZZER
    import Testing
#endif

// The invariants the `tokens` libFuzzer target in `Fuzz/` asserts. This file is compiled twice:
// into the test target (the suite at the end replays the committed corpus and the regressions
// through these checks) and, with `-D CORDON_FUZZER`, into the fuzzer by `scripts/fuzz.sh` (which
// builds only the parsing files of CordonTokens: none of them needs swift-crypto). Each check
// returns nil when every invariant holds and a description of the first broken one.

/// Every token parser on one input: CTF strings, otpauth and migration URIs, the raw protobuf
/// payload, the bounded XML reader and SDTID files.
enum TokensFuzzCheck {
    static func check(_ input: [UInt8]) -> String? {
        if let problem = offsetProblem(
            { () throws(TokenFormatError) in _ = try MigrationPayload.parse(payload: input) }, count: input.count)
        {
            return "protobuf: \(problem)"
        }
        if let problem = xmlProblem(input) { return problem }
        guard let text = String(validating: input, as: UTF8.self) else { return nil }
        if let problem = ctfProblem(text) { return problem }
        if let problem = otpauthProblem(text) { return problem }
        do {
            let tokens = try MigrationPayload.parse(uri: text)
            if tokens.isEmpty { return "a migration batch parsed to no token" }
            for token in tokens {
                do { try token.validate() } catch { return "a migration token does not validate: \(error)" }
            }
        } catch {}
        return nil
    }

    /// A parse that fails with `.malformed` gives an offset inside the input.
    static func offsetProblem(_ parse: () throws(TokenFormatError) -> Void, count: Int) -> String? {
        do { try parse() } catch {
            if case .malformed(_, let offset, let reason) = error, offset < 0 || offset > count || reason.isEmpty {
                return "offset \(offset) of \(count) bytes (\(reason))"
            }
        }
        return nil
    }

    static func xmlProblem(_ input: [UInt8]) -> String? {
        if let problem = offsetProblem(
            { () throws(TokenFormatError) in _ = try BoundedXML.parse(input) }, count: input.count)
        {
            return "xml: \(problem)"
        }
        if let root = try? BoundedXML.parse(input) {
            var pending = [(root, 1)]
            var count = 0
            while let (element, depth) = pending.popLast() {
                count += 1
                if element.name.isEmpty || element.offset < 0 || element.offset >= input.count {
                    return "xml: element '\(element.name)' at \(element.offset)"
                }
                if depth > BoundedXML.Limits().depth || element.text.utf8.count > BoundedXML.Limits().text {
                    return "xml: a limit was passed"
                }
                pending += element.children.map { ($0, depth + 1) }
            }
            if count > BoundedXML.Limits().elements { return "xml: more elements than the limit" }
        }
        if let file = try? SDTIDFile.parse(input) {
            if let serial = try? file.serial(), serial.utf8.count != 12 { return "sdtid: serial \(serial)" }
            _ = try? file.day("Death")
            _ = try? file.integer("Digits", default: 6)
        }
        return nil
    }

    static func ctfProblem(_ text: String) -> String? {
        guard let token = try? CTFString.parse(text) else { return nil }
        switch token {
        case .numeric(let numeric):
            if numeric.serial.utf8.count != 12 || !numeric.serial.utf8.allSatisfy({ (48...57).contains($0) }) {
                return "ctf: serial \(numeric.serial)"
            }
            if numeric.encryptedSeed.count != 16 || !(81...85).contains(numeric.digits.count) {
                return "ctf: a v2 token of the wrong shape"
            }
        case .binary(let binary):
            if binary.bytes.count != SecurIDBinaryToken.size || !(3...4).contains(binary.version) {
                return "ctf: a v3/v4 token of the wrong shape"
            }
        }
        return nil
    }

    /// A parsed URI validates, and its own `keyURI` parses back to the same token.
    static func otpauthProblem(_ text: String) -> String? {
        guard let token = try? OTPAuthURI.parse(text) else { return nil }
        do { try token.validate() } catch { return "otpauth: accepted but invalid: \(error)" }
        guard let again = try? OTPAuthURI.parse(token.keyURI) else { return "otpauth: keyURI does not parse" }
        return again == token ? nil : "otpauth: keyURI does not round-trip"
    }
}

#if !CORDON_FUZZER
    @Suite("Fuzz corpus and regressions: tokens")
    struct TokensFuzzRegressionTests {
        /// `Fuzz/corpus/tokens/` and `Fuzz/regressions/tokens/` files, by path.
        static let inputs: [String] = {
            let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz")
            return ["corpus", "regressions"].flatMap { kind -> [String] in
                let directory = root.appendingPathComponent(kind).appendingPathComponent("tokens")
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0).path }
            }
        }()

        @Test func theCorpusHoldsEveryFormat() {
            let names = Set(Self.inputs.map { URL(fileURLWithPath: $0).lastPathComponent })
            for name in ["ctf-v2", "ctf-v3-url", "sdtid.xml", "otpauth-totp", "otpauth-migration", "migration.pb"] {
                #expect(names.contains(name), "\(name)")
            }
        }

        @Test(arguments: inputs)
        func inputKeepsTheInvariants(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(TokensFuzzCheck.check(bytes) == nil)
        }
    }
#endif
