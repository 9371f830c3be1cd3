/// Why fleetd cannot start or a step failed, with what to do about it.
public struct FleetdError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the file, field or URL.
    public var message: String
    /// What to do about it.
    public var hint: String

    public init(_ message: String, hint: String) {
        self.message = message
        self.hint = hint
    }

    public var description: String { "\(message)\nhint: \(hint)" }
}
