/// A varlink error reply: a reverse-domain name and its parameters.
public struct VarlinkError: Error, Sendable, Equatable {
    /// The fully qualified error name, e.g. `io.cordon.Agent.WrongPasscode`.
    public var name: String
    /// The error's parameters.
    public var parameters: [String: JSONValue]

    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// `org.varlink.service.InterfaceNotFound`.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotFound`.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.MethodNotImplemented` (used for `upgrade`).
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InvalidParameter`, naming the offending parameter.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.PermissionDenied`.
    public static let permissionDenied = VarlinkError(name: "org.varlink.service.PermissionDenied")

    /// `org.varlink.service.ExpectedMore`: a streaming method was called without `more`.
    public static let expectedMore = VarlinkError(name: "org.varlink.service.ExpectedMore")

    /// `io.cordon.Agent.InvalidMessage`: the bytes are not a varlink call; the connection closes.
    public static func invalidMessage(reason: String) -> VarlinkError {
        VarlinkError(name: "io.cordon.Agent.InvalidMessage", parameters: ["reason": .string(reason)])
    }

    /// `io.cordon.Agent.MessageTooLarge`: a message exceeded the limit; the connection closes.
    public static func messageTooLarge(limit: Int) -> VarlinkError {
        VarlinkError(name: "io.cordon.Agent.MessageTooLarge", parameters: ["limit": .int(limit)])
    }
}
