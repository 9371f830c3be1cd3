import CordonProtocol

extension CLIError {
    /// A failure of `cordon run` or of the passcode prompt as the CLI reports it: its message, hint
    /// and exit code.
    init(_ text: ErrorText) {
        self.init(text.message, hint: text.hint, code: CLIExitCode(text.exit))
    }
}
