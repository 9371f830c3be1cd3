import CordonProtocol
import Foundation
import Testing

@testable import CordonPolicy

/// A third-party validator (Python `jsonschema`, draft 2020-12) and the Swift parser must agree,
/// file by file, on which documents are valid: every shipped policy and every invalid fixture.
@Suite("JSON Schema: agreement with a third-party validator")
struct SchemaAgreementTests {
    typealias Support = ParserTestSupport

    /// Prints `valid|invalid<TAB>path<TAB>reason` per file. Strict JSON first: duplicate keys and
    /// NaN/Infinity are errors (the schema cannot say so), as they are for the Swift parser.
    static let validatorScript = """
        import json, sys
        from jsonschema import Draft202012Validator

        with open(sys.argv[1], encoding="utf-8") as handle:
            schema = json.load(handle)
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema)

        def unique_pairs(pairs):
            keys = [key for key, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ValueError("duplicate key")
            return dict(pairs)

        def no_constants(name):
            raise ValueError("not JSON: " + name)

        def clean(text):
            return " ".join(str(text).split())

        for path in sys.argv[2:]:
            try:
                with open(path, encoding="utf-8") as handle:
                    document = json.loads(handle.read(), object_pairs_hook=unique_pairs, parse_constant=no_constants)
            except Exception as error:
                print("invalid\\t%s\\tnot JSON: %s" % (path, clean(error)))
                continue
            errors = [clean(error.message) for error in validator.iter_errors(document)]
            print("%s\\t%s\\t%s" % ("invalid" if errors else "valid", path, "; ".join(errors)))
        """

    /// `$PYTHON`, or `python3` from the `PATH`.
    static var python: String { ProcessInfo.processInfo.environment["PYTHON"] ?? "python3" }

    /// Runs the validator over `files`: path → (valid, reason).
    static func thirdPartyVerdicts(_ files: [URL]) throws -> [String: (valid: Bool, reason: String)] {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-schema-\(UUID().uuidString).py")
        try validatorScript.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script.path, Support.schemaFile.path] + files.map(\.path)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                "\(python) with jsonschema failed (run scripts/install-deps.sh to install jsonschema):\n\(errorText)")
        }
        var verdicts: [String: (valid: Bool, reason: String)] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { continue }
            verdicts[fields[1]] = (fields[0] == "valid", fields[2])
        }
        return verdicts
    }

    @Test func bothValidatorsAgreeOnEveryFile() throws {
        let policies = try Support.policyFiles()
        let fixtures = try Support.invalidFixtureNames().map {
            Support.invalidFixturesDirectory.appendingPathComponent($0 + ".json")
        }
        let files = policies + fixtures
        #expect(policies.count >= 4 && fixtures.count >= 15)
        let verdicts = try Self.thirdPartyVerdicts(files)
        #expect(verdicts.count == files.count)
        for file in files {
            let verdict = try #require(verdicts[file.path], "no verdict for \(file.path)")
            let result = PolicyParser.parse(
                try Support.bytes(of: file), source: PolicySource(path: file.path, origin: .admin))
            let swiftValid: Bool
            var swiftReason = ""
            switch result {
            case .success: swiftValid = true
            case .failure(let failure):
                swiftValid = false
                swiftReason = failure.description
            }
            #expect(
                swiftValid == verdict.valid,
                "\(file.lastPathComponent): jsonschema says \(verdict.valid ? "valid" : "invalid: \(verdict.reason)"); Swift says \(swiftValid ? "valid" : "invalid: \(swiftReason)")"
            )
        }
        #expect(policies.allSatisfy { verdicts[$0.path]?.valid == true })
        #expect(fixtures.allSatisfy { verdicts[$0.path]?.valid == false })
    }

    @Test func bothValidatorsAgreeOnGeneratedDocuments() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [URL] = []
        for (index, text) in SchemaAgreementSamples.documents.enumerated() {
            let file = directory.appendingPathComponent("sample-\(index).json")
            try text.write(to: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        let verdicts = try Self.thirdPartyVerdicts(files)
        for (file, text) in zip(files, SchemaAgreementSamples.documents) {
            let verdict = try #require(verdicts[file.path])
            let swiftValid =
                (try? PolicyParser.parse(text, source: PolicySource(path: "x", origin: .admin)).get()) != nil
            #expect(
                swiftValid == verdict.valid,
                "\(text): jsonschema \(verdict.valid) (\(verdict.reason)), Swift \(swiftValid)")
        }
    }

    /// The schema's host-pattern regex and `HostPattern` agree pattern by pattern (issue #32: the
    /// regex let `*.10.0.0.1` through): each pattern in a pins entry, checked by jsonschema and by
    /// `HostPattern`.
    @Test func theSchemaAndHostPatternAgreeOnHostPatterns() throws {
        let long63 = String(repeating: "a", count: 63)
        let name253 = [long63, long63, long63, String(repeating: "b", count: 61)].joined(separator: ".")
        let patterns = [
            "api.example.com", "*.example.com", "*.10.0.0.1", "*.10.0.0.01", "*.256.0.0.1", "*.1.2.3", "10.0.0.1",
            "1.2.3.4.5", "::1", "fe80::1", "FE80::1", "*.com", "*", "**", "**.example.com", "a*.example.com",
            "a.*.example.com", "*.*.example.com", "A.example.com", "example.com.", ".example.com", "a..example.com",
            "xn--bcher-kva.example", "a_b.example.com", "-a.example.com", long63 + ".com",
            String(repeating: "a", count: 64) + ".com", name253, name253 + "c", "*." + name253, "*." + name253 + "c",
            String(repeating: ":", count: 45), String(repeating: ":", count: 46), "api.example.com\n",
            "\napi.example.com", "exa mple.com", "[::1]",
        ]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cordon-host-patterns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [URL] = []
        for (index, pattern) in patterns.enumerated() {
            let entry: [String: Any] = [
                "hosts": [pattern], "pinSha256": ["47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],
            ]
            let document: [String: Any] = ["schema": "cordon.policy.v1", "network": ["pins": [entry]]]
            let file = directory.appendingPathComponent("pattern-\(index).json")
            try JSONSerialization.data(withJSONObject: document).write(to: file)
            files.append(file)
        }
        let verdicts = try Self.thirdPartyVerdicts(files)
        for (pattern, file) in zip(patterns, files) {
            let verdict = try #require(verdicts[file.path], "no verdict for \(pattern)")
            let accepted = HostPattern(pattern) != nil
            #expect(
                verdict.valid == accepted,
                "\(pattern.debugDescription): jsonschema \(verdict.valid) (\(verdict.reason)), HostPattern \(accepted)")
        }
        #expect(verdicts[files[2].path]?.valid == false, "*.10.0.0.1 is refused")
    }
}
