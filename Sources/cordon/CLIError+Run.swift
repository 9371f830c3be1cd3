import CordonRun

extension CLIError {
    /// `cordon run`'s failure as the CLI reports it: its message and hint, and the usage exit code
    /// when the command line is at fault.
    init(_ failure: RunFailure) {
        self.init(failure.message, hint: failure.hint, code: failure.kind == .usage ? .usage : .failure)
    }
}
