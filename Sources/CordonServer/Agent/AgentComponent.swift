import CordonLifecycle
import CordonProtocol
import NIOCore

/// A part of the agent that owns its state on the agent's event loop, and how it reacts to the
/// agent's events and to connections closing.
///
/// Components are created and registered in one place (`Agent+Components.swift`); the methods
/// each serves are routed to it in one exhaustive switch (`Agent+Routing.swift`). A component
/// reaches the rest of the agent only through the ``ComponentHost`` it is given, never through
/// another component's state. Like the agent, a component is not `Sendable`: it lives and is
/// called on the loop (docs/ARCHITECTURE.md, "Components").
protocol AgentComponent: AnyObject {
    /// Reacts to an event the agent emitted, in event order, before subscribers are written to.
    func observe(_ event: CordonEvent)
    /// An app has just registered on its connection, as `process` (before its reply is sent).
    func registered(_ registration: AppRegistration, process: AppProcess)
    /// Forgets what a closed connection held.
    func connectionClosed(_ id: ConnectionID)
    /// The agent is stopping: let go of what must not outlive it.
    func shutdown()
}

extension AgentComponent {
    func observe(_ event: CordonEvent) {}
    func registered(_ registration: AppRegistration, process: AppProcess) {}
    func connectionClosed(_ id: ConnectionID) {}
    func shutdown() {}
}

/// A component that serves every method of one varlink interface: it switches over the
/// interface's enum, with no `default:`, so a method without a handler does not compile.
protocol InterfaceComponent: AgentComponent {
    /// The interface's methods (`Method.Tokens`).
    associatedtype Methods: CaseIterable
    /// Serves one call of the interface.
    func serve(_ method: Methods, _ call: ComponentCall) throws(VarlinkError) -> CallOutcome
}

/// One call as a component receives it: the method, the parsed message, the caller and the
/// encoder its reply is written with.
struct ComponentCall {
    let method: Method
    let message: VarlinkCallMessage
    let connection: AgentConnection
    let encoder: ReplyEncoder

    /// The call's header (`more`, `oneway`).
    var header: VarlinkCallHeader { message.header }

    /// The call's parameters as `type`; a missing or mistyped one is `InvalidParameter`.
    func parameters<T: Decodable>(_ type: T.Type) throws(VarlinkError) -> T {
        try VarlinkCodec().decodeParameters(type, from: message)
    }

    /// The call's parameters as `type`, which reads itself (the most frequent calls); errors as
    /// the `Decodable` path names them.
    func parameters<T: JSONReadable>(_ type: T.Type) throws(VarlinkError) -> T {
        try VarlinkCodec().decodeParameters(type, from: message)
    }
}

/// Runs `body`, turning a `CordonError` into its varlink error.
func typed<T>(_ body: () throws(CordonError) -> T) throws(VarlinkError) -> T {
    do {
        return try body()
    } catch {
        throw error.varlinkError
    }
}
