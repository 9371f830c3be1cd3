import CordonProtocol

/// Where a policy document came from.
public struct PolicySource: Sendable, Hashable, Comparable {
    /// Who wrote it (`builtin`, `admin`, `user`).
    public typealias Origin = PolicyOrigin

    /// The file path (or `<builtin>` for the embedded default, `<inline>` for `Validate`).
    public var path: String
    public var origin: Origin

    public init(path: String, origin: Origin) {
        self.path = path
        self.origin = origin
    }

    public static func < (lhs: PolicySource, rhs: PolicySource) -> Bool {
        (lhs.origin.rawValue, lhs.path) < (rhs.origin.rawValue, rhs.path)
    }
}

/// A rule: one value in one file, named by the file and a JSON pointer (RFC 6901).
public struct RuleReference: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var source: PolicySource
    /// e.g. `/pasteboard/copyOut` or `/overrides/0/documents/sendTo`.
    public var pointer: String

    public init(source: PolicySource, pointer: String) {
        self.source = source
        self.pointer = pointer
    }

    public var description: String { "\(source.path)#\(pointer)" }

    public static func < (lhs: RuleReference, rhs: RuleReference) -> Bool {
        (lhs.source, lhs.pointer) < (rhs.source, rhs.pointer)
    }
}

/// One problem found in a policy file: where it is and what was expected.
public struct PolicyDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    /// The JSON pointer of the offending value ("" for the whole document).
    public var pointer: String
    /// 1-based line and column of the offending value or token, when known.
    public var line: Int?
    public var column: Int?
    /// What is wrong and what was expected, e.g. `unknown key "copyOutt"; did you mean "copyOut"?`.
    public var message: String

    public init(path: String, pointer: String, line: Int?, column: Int?, message: String) {
        self.path = path
        self.pointer = pointer
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: POINTER: MESSAGE` (position parts omitted when unknown).
    public var description: String {
        var location = path
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): \(pointer.isEmpty ? "/" : pointer): \(message)"
    }
}
