/// The wire form and the user's text of each error, derived from its ``ErrorDeclaration``.
extension CordonError {
    /// The name of `error`'s case (`wrongPasscode`).
    static func caseName(of error: CordonError) -> String {
        Mirror(reflecting: error).children.first?.label ?? String(describing: error)
    }

    /// The declaration this error encodes to.
    public var declaration: ErrorDeclaration {
        let name = Self.caseName(of: self)
        guard let declaration = ErrorDeclarations.byCase[name] else {
            preconditionFailure("CordonError.\(name) has no ErrorDeclaration")
        }
        return declaration
    }

    /// The varlink error name.
    public var varlinkName: String { declaration.name }

    /// The varlink error parameters: the case's associated values under the declared names, in
    /// order, and the declared constants.
    public var varlinkParameters: [String: JSONValue] {
        let declared = declaration.parameters
        let carried = declared.filter { if case .constant = $0.kind { false } else { true } }
        // The payload is a tuple of the labelled values (one value too, as the runtime shows it).
        let values: [Any] =
            Mirror(reflecting: self).children.first.map { payload in
                let tuple = Mirror(reflecting: payload.value)
                return tuple.displayStyle == .tuple ? tuple.children.map(\.value) : [payload.value]
            } ?? []
        var parameters: [String: JSONValue] = [:]
        for (parameter, value) in zip(carried, values) {
            // An optional parameter's nil is left out of the wire form.
            let unwrapped = Mirror(reflecting: value)
            if unwrapped.displayStyle == .optional {
                guard let present = unwrapped.children.first?.value else { continue }
                parameters[parameter.name] = Self.json(present)
            } else {
                parameters[parameter.name] = Self.json(value)
            }
        }
        for parameter in declared {
            if case .constant(let value) = parameter.kind { parameters[parameter.name] = .string(value) }
        }
        return parameters
    }

    /// The error as a varlink error reply.
    public var varlinkError: VarlinkError {
        VarlinkError(name: varlinkName, parameters: varlinkParameters)
    }

    /// What the user is told: the message, hint and exit code its declaration gives.
    public var text: ErrorText {
        guard let explain = declaration.explain else { preconditionFailure("\(varlinkName) is not explained") }
        return explain(ErrorArguments(varlinkParameters))
    }

    /// Decodes a varlink error into a typed error, or `nil` for names Cordon does not define.
    public init?(_ error: VarlinkError) {
        guard let decode = ErrorDeclarations.byName[error.name]?.decode else { return nil }
        self = decode(ErrorArguments(error.parameters))
    }

    /// An associated value as JSON.
    private static func json(_ value: Any) -> JSONValue {
        switch value {
        case let value as Int: .int(value)
        case let value as Double: .double(value)
        case let value as String: .string(value)
        case let value as [String]: .array(value.map { .string($0) })
        default: preconditionFailure("an error parameter of type \(type(of: value))")
        }
    }
}
