/// Parses and validates policy documents (schema `cordon.policy.v1`), reporting every problem.
///
/// A document must be a JSON object with `"schema": "cordon.policy.v1"`; every section is
/// optional. Each problem (a syntax error, a wrong type, an unknown or misspelt key, a value out
/// of range, a value the file's origin may not set) becomes a `PolicyDiagnostic` with the file,
/// the JSON pointer, the line and column, and what was expected. A syntax error ends parsing, so
/// it is the only diagnostic; otherwise all problems of the file are reported, in document order.
public enum PolicyParser {
    /// Parses UTF-8 `bytes` (at most 1 MiB) from `source` into a validated document.
    public static func parse(_ bytes: [UInt8], source: PolicySource) -> Result<PolicyDocument, PolicyParseFailure> {
        switch PositionedJSONParser.parse(bytes) {
        case .success(let json):
            return validate(json, source: source)
        case .failure(let error):
            let diagnostic = PolicyDiagnostic(
                path: source.path, pointer: error.pointer, line: error.line, column: error.column,
                message: error.message)
            return .failure(PolicyParseFailure(diagnostics: [diagnostic]))
        }
    }

    /// Parses `text` from `source` into a validated document.
    public static func parse(_ text: String, source: PolicySource) -> Result<PolicyDocument, PolicyParseFailure> {
        parse(Array(text.utf8), source: source)
    }

    /// Validates an already parsed JSON value as a policy document from `source`.
    public static func validate(_ json: PositionedJSON, source: PolicySource) -> Result<
        PolicyDocument, PolicyParseFailure
    > {
        let validator = Validator(source: source)
        let document = validator.document(json)
        let diagnostics = inDocumentOrder(validator.diagnostics)
        guard diagnostics.isEmpty, let document else {
            return .failure(PolicyParseFailure(diagnostics: diagnostics))
        }
        return .success(document)
    }

    /// Diagnostics sorted by line and column (those without a position first), ties kept in the
    /// order they were found.
    static func inDocumentOrder(_ diagnostics: [PolicyDiagnostic]) -> [PolicyDiagnostic] {
        diagnostics.enumerated().sorted { lhs, rhs in
            let left = (lhs.element.line ?? 0, lhs.element.column ?? 0, lhs.offset)
            let right = (rhs.element.line ?? 0, rhs.element.column ?? 0, rhs.offset)
            return left < right
        }.map(\.element)
    }
}

/// Why a policy file was rejected: every problem found in it, in document order.
public struct PolicyParseFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems; never empty.
    public var diagnostics: [PolicyDiagnostic]

    /// A failure with these problems.
    public init(diagnostics: [PolicyDiagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One `FILE:LINE:COLUMN: POINTER: MESSAGE` line per problem.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
