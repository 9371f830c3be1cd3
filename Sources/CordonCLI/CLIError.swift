import CordonFleetAdmin
import CordonKit
import CordonProtocol

/// An error as the user sees it: what went wrong, what to do, and the exit code.
struct CLIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, printed after `cordon: error: `.
    var message: String
    /// What to do about it, printed after `hint: `.
    var hint: String
    var code: CLIExitCode

    init(_ message: String, hint: String, code: CLIExitCode = .failure) {
        self.message = message
        self.hint = hint
        self.code = code
    }

    var description: String { message }

    /// The hint for every case where cordond cannot be reached.
    static let agentHint = "is cordond running? try `cordon doctor`"

    /// The user-facing form of `error`, or `nil` when it is not one of Cordon's errors.
    init?(_ error: any Error) {
        switch error {
        case let error as CLIError: self = error
        case let error as CordonError: self.init(error)
        case let error as CordonClientError: self.init(error)
        case let error as ErrorText: self.init(error)
        case let error as FleetAdminError:
            self.init(error.message, hint: error.hint, code: error.kind == .usage ? .usage : .failure)
        default: return nil
        }
    }

    /// The user-facing form of a client-side error.
    init(_ error: CordonClientError) {
        let versionHint = "cordon and cordond may be different versions; update both, then try again"
        switch error {
        case .agentUnavailable(let socket, let reason):
            self.init("cannot reach cordond at \(socket): \(reason)", hint: Self.agentHint, code: .agentUnavailable)
        case .connectionClosed:
            self.init("the connection to cordond closed", hint: Self.agentHint, code: .agentUnavailable)
        case .remote(let error):
            if let text = ErrorDeclarations.text(for: error) {
                self.init(text.message, hint: text.hint, code: CLIExitCode(text.exit))
            } else {
                self.init("cordond answered with an unknown error: \(error.name)", hint: versionHint)
            }
        case .protocolViolation(let detail):
            self.init("unexpected answer from cordond: \(detail)", hint: versionHint)
        }
    }

}

extension CLIError {
    /// The user-facing form of an error the agent returned: the message, hint and exit code its
    /// declaration gives (`ErrorDeclarations` in CordonProtocol).
    init(_ error: CordonError) {
        let text = error.text
        self.init(text.message, hint: text.hint, code: CLIExitCode(text.exit))
    }
}
