/// Every error Cordon declares, as data: the one place an error's name, parameters, IDL comment,
/// decoding and CLI message are written (docs/ARCHITECTURE.md, "Where to add").
///
/// Adding an error is a case in ``CordonError`` and one ``ErrorDeclaration`` in the interface's
/// list here; the IDL, the wire form and the CLI's message follow from it.
public enum ErrorDeclarations {
    /// Every declaration, interface by interface, each in the order its IDL lists it.
    public static let all: [ErrorDeclaration] =
        agent + app + pasteboard + policy + posture + storage + tokens + identity

    /// The declaration of each varlink error name.
    public static let byName: [String: ErrorDeclaration] = Dictionary(
        all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The declaration each ``CordonError`` case encodes to, by case name: the one that explains
    /// it (an alias only decodes).
    static let byCase: [String: ErrorDeclaration] = Dictionary(
        all.compactMap { declaration in
            guard declaration.explain != nil, let name = declaration.caseName else { return nil }
            return (name, declaration)
        }, uniquingKeysWith: { first, _ in first })

    /// What the user is told about `error`, a reply of the agent: its declaration's message, hint
    /// and exit code (a protocol failure's too, which is no ``CordonError``); nil for a name
    /// Cordon does not declare.
    public static func text(for error: VarlinkError) -> ErrorText? {
        if let typed = CordonError(error) { return typed.text }
        return byName[error.name]?.explain?(ErrorArguments(error.parameters))
    }

    /// The `error` lines of `interface` with their comments, each after a blank line, as its IDL
    /// ends.
    public static func idl(for interface: String) -> String {
        all.filter { $0.interface == interface }.map { "\n" + $0.idl }.joined()
    }
}
