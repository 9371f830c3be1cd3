/// One error of Cordon's vocabulary, declared once as data: its varlink name, the comment and
/// parameters its interface description (IDL) shows, how a client decodes it into a
/// ``CordonError``, and what the CLI tells the user (message, hint, exit code).
///
/// The IDL's `error` lines, ``CordonError``'s wire form (name and parameters, both ways) and
/// the CLI's messages are all derived from the declarations in ``ErrorDeclarations``
/// (docs/ARCHITECTURE.md, "Where to add").
public struct ErrorDeclaration: Sendable {
    /// The varlink error name (`io.cordon.Agent.WrongPasscode`).
    public let name: String
    /// The comment the IDL shows above the `error` line, one element per line.
    public let documentation: [String]
    /// The parameters, in the IDL's order.
    public let parameters: [ErrorParameter]
    /// Builds the typed error from the wire's parameters; `nil` for an error that is not a
    /// ``CordonError`` (a protocol failure the connection closes on).
    let decode: (@Sendable (ErrorArguments) -> CordonError)?
    /// What the user is told, from the wire's parameters; `nil` for an alias, which decodes to a
    /// case another declaration encodes, and for an error that is not a ``CordonError``.
    let explain: (@Sendable (ErrorArguments) -> ErrorText)?

    /// An error with a one-line IDL comment.
    init(
        _ name: String, _ documentation: String, parameters: [ErrorParameter],
        decode: (@Sendable (ErrorArguments) -> CordonError)? = nil,
        explain: (@Sendable (ErrorArguments) -> ErrorText)? = nil
    ) {
        self.init(name, [documentation], parameters: parameters, decode: decode, explain: explain)
    }

    /// An error with a comment of several lines.
    init(
        _ name: String, _ documentation: [String], parameters: [ErrorParameter],
        decode: (@Sendable (ErrorArguments) -> CordonError)? = nil,
        explain: (@Sendable (ErrorArguments) -> ErrorText)? = nil
    ) {
        self.name = name
        self.documentation = documentation
        self.parameters = parameters
        self.decode = decode
        self.explain = explain
    }

    /// The interface that declares the error (`io.cordon.Agent`).
    public var interface: Substring { name[..<(name.lastIndex(of: ".") ?? name.startIndex)] }

    /// The error's name within its interface (`WrongPasscode`).
    public var member: Substring { name[(name.lastIndex(of: ".").map(name.index(after:)) ?? name.startIndex)...] }

    /// The ``CordonError`` case this decodes to (`wrongPasscode`), or `nil` for a protocol failure.
    public var caseName: String? { decode.map { CordonError.caseName(of: $0(ErrorArguments([:]))) } }

    /// The comment and `error` line, as the IDL shows them.
    public var idl: String {
        let signature = parameters.map { "\($0.name): \($0.idlType)" }.joined(separator: ", ")
        return documentation.map { "# \($0)\n" }.joined() + "error \(member) (\(signature))\n"
    }
}
