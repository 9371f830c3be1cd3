import CordonPrompt
import CordonRun

extension CLIError {
    /// `cordon run`'s failure as the CLI reports it: its message and hint, and the usage exit code
    /// when the command line is at fault.
    init(_ failure: RunFailure) {
        self.init(failure.message, hint: failure.hint, code: failure.kind == .usage ? .usage : .failure)
    }
}

extension CLIError {
    /// A passcode prompt's failure as the CLI reports it, with the exit code its kind gives.
    init(_ failure: PromptFailure) {
        let code: CLIExitCode =
            switch failure.kind {
            case .failure: .failure
            case .usage: .usage
            case .cancelled: .cancelled
            }
        self.init(failure.message, hint: failure.hint, code: code)
    }
}
