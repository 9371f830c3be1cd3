/// One parameter of a declared error: its name and its IDL type, or a value it always has.
public struct ErrorParameter: Sendable, Equatable {
    /// The kinds of value an error parameter carries.
    public enum Kind: Sendable, Equatable {
        case string
        case int
        case float
        case strings
        /// Always this string (it carries no associated value of the case).
        case constant(String)
    }

    /// The parameter's name on the wire.
    public let name: String
    /// What it carries.
    public let kind: Kind
    /// Whether it may be absent (`?int` in the IDL): added to an error after its first release, so
    /// older peers neither send nor need it. A nil associated value is left out of the wire form.
    public var optional = false

    /// A string parameter.
    static func string(_ name: String) -> Self { Self(name: name, kind: .string) }
    /// An integer parameter.
    static func int(_ name: String) -> Self { Self(name: name, kind: .int) }
    /// A floating-point parameter (seconds).
    static func float(_ name: String) -> Self { Self(name: name, kind: .float) }
    /// An integer parameter that may be absent.
    static func optionalInt(_ name: String) -> Self { Self(name: name, kind: .int, optional: true) }
    /// A string parameter that may be absent.
    static func optionalString(_ name: String) -> Self { Self(name: name, kind: .string, optional: true) }
    /// A list of strings.
    static func strings(_ name: String) -> Self { Self(name: name, kind: .strings) }
    /// A string parameter that always holds `value`.
    static func constant(_ name: String, _ value: String) -> Self { Self(name: name, kind: .constant(value)) }

    /// The type the IDL shows.
    public var idlType: String {
        (optional ? "?" : "") + baseType
    }

    private var baseType: String {
        switch kind {
        case .string, .constant: "string"
        case .int: "int"
        case .float: "float"
        case .strings: "[]string"
        }
    }
}
