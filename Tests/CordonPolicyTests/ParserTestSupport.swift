import Foundation
import Testing

@testable import CordonPolicy

/// Paths and helpers shared by the parser, JSON and schema tests.
enum ParserTestSupport {
    /// The repository root, found from this file's path (symlinks resolved, so a scratch package
    /// whose test folder links to the repository finds the repository).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `policies/`.
    static var policiesDirectory: URL { repositoryRoot.appendingPathComponent("policies") }

    /// `policies/cordon.policy.v1.schema.json`.
    static var schemaFile: URL { policiesDirectory.appendingPathComponent("cordon.policy.v1.schema.json") }

    /// `Tests/CordonPolicyTests/fixtures/invalid/`.
    static var invalidFixturesDirectory: URL {
        repositoryRoot.appendingPathComponent("Tests/CordonPolicyTests/fixtures/invalid")
    }

    /// The invalid fixtures' names without `.json`, sorted.
    static func invalidFixtureNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: invalidFixturesDirectory.path)
            .filter { $0.hasSuffix(".json") }
            .map { String($0.dropLast(".json".count)) }
            .sorted()
    }

    /// Every `*.json` under `policies/` except the schema, sorted.
    static func policyFiles() throws -> [URL] {
        var files: [URL] = []
        let enumerator = FileManager.default.enumerator(at: policiesDirectory, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "json", url.lastPathComponent != schemaFile.lastPathComponent {
                files.append(url)
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The bytes of `url`.
    static func bytes(of url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// `text` parsed as a policy from an admin file named `test.json`.
    static func parse(_ text: String, origin: PolicySource.Origin = .admin) -> Result<
        PolicyDocument, PolicyParseFailure
    > {
        PolicyParser.parse(text, source: PolicySource(path: "test.json", origin: origin))
    }

    /// The diagnostics of `text` (empty when it is valid).
    static func diagnostics(_ text: String, origin: PolicySource.Origin = .admin) -> [PolicyDiagnostic] {
        switch parse(text, origin: origin) {
        case .success: return []
        case .failure(let failure): return failure.diagnostics
        }
    }

    /// The messages of `text`'s diagnostics.
    static func messages(_ text: String, origin: PolicySource.Origin = .admin) -> [String] {
        diagnostics(text, origin: origin).map(\.message)
    }

    /// A document with `schema` and the given top-level members (JSON text without braces).
    static func document(_ members: String) -> String {
        members.isEmpty ? #"{"schema": "cordon.policy.v1"}"# : #"{"schema": "cordon.policy.v1", "# + members + "}"
    }

    /// The parsed document of `text`, recording an issue when it is invalid.
    static func valid(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> PolicyDocument? {
        switch parse(text) {
        case .success(let document):
            return document
        case .failure(let failure):
            Issue.record("unexpected diagnostics:\n\(failure)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// `text` parsed as JSON, recording an issue when it fails.
    static func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> PositionedJSON? {
        switch PositionedJSONParser.parse(text) {
        case .success(let value):
            return value
        case .failure(let error):
            Issue.record("unexpected JSON error: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The error `text` fails with, recording an issue when it parses.
    static func jsonError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> PositionedJSONError? {
        jsonError(Array(text.utf8), sourceLocation: sourceLocation)
    }

    /// The error `bytes` fail with, recording an issue when they parse.
    static func jsonError(
        _ bytes: [UInt8], limits: PositionedJSONParser.Limits = .init(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> PositionedJSONError? {
        switch PositionedJSONParser.parse(bytes, limits: limits) {
        case .success:
            Issue.record("expected a JSON error", sourceLocation: sourceLocation)
            return nil
        case .failure(let error):
            return error
        }
    }
}
