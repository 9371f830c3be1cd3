/// A varlink error's parameters, read the way a client decodes them: a missing or mistyped
/// value reads as empty or zero.
public struct ErrorArguments: Sendable {
    /// The parameters as they came.
    public let parameters: [String: JSONValue]

    /// Wraps the parameters of an error.
    public init(_ parameters: [String: JSONValue]) { self.parameters = parameters }

    /// The string `key`, or empty.
    public func string(_ key: String) -> String { parameters[key]?.stringValue ?? "" }
    /// The integer `key`, or 0.
    public func int(_ key: String) -> Int { parameters[key]?.intValue ?? 0 }
    /// The integer `key`, or nil when it is absent (an optional parameter).
    public func optionalInt(_ key: String) -> Int? { parameters[key]?.intValue }
    /// The string `key`, or nil when it is absent (an optional parameter).
    public func optionalString(_ key: String) -> String? { parameters[key]?.stringValue }
    /// The number `key` (a whole number too), or 0.
    public func double(_ key: String) -> Double { parameters[key]?.doubleValue ?? 0 }
    /// The strings of the list `key`, or none.
    public func strings(_ key: String) -> [String] { parameters[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}
