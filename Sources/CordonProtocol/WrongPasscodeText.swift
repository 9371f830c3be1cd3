/// What the user is told after a wrong passcode (`io.cordon.Agent.WrongPasscode`): how many
/// attempts are left before which limit, and, when the last one was used, what happened.
enum WrongPasscodeText {
    /// The message, hint and exit code for the error's wire parameters.
    static func explain(_ p: ErrorArguments) -> ErrorText {
        let attemptsLeft = p.int("attemptsLeft")
        let retryAfter = p.double("retryAfterSeconds")
        let maxAttemptsLeft = p.optionalInt("maxAttemptsLeft")
        let hardwareLeft = p.optionalInt("hardwareAttemptsLeft")
        if attemptsLeft <= 0, let maxAttemptsLeft, hardwareLeft != nil, maxAttemptsLeft > 0 {
            return ErrorText(
                "wrong passcode; the TPM is now in dictionary-attack lockout "
                    + "(\(ErrorText.count(maxAttemptsLeft, "attempt")) left before the max-attempts action)",
                hint: "wait for the TPM to recover; see `cordon status`", exit: .passcode)
        }
        if attemptsLeft <= 0 {
            switch p.optionalString("maxAttemptsAction") {
            case "wipe":
                return ErrorText(
                    "wrong passcode; that was the last attempt (passcode.maxAttempts): the container was erased "
                        + "(passcode.onMaxAttempts: wipe) and its data is gone",
                    hint: "start again with `cordon init`", exit: .passcode)
            case "lockout":
                return ErrorText(
                    "wrong passcode; no attempts left (passcode.maxAttempts): cordond is locked out "
                        + "(passcode.onMaxAttempts: lockout), one attempt per maximum back-off delay",
                    hint: ErrorText.waitHint(retryAfter), exit: .passcode)
            default:
                return ErrorText(
                    "wrong passcode; no attempts left: the max-attempts action (lockout or wipe) was applied",
                    hint: "see what remains with `cordon status`", exit: .passcode)
            }
        }
        if let maxAttemptsLeft, hardwareLeft != nil {
            return ErrorText(
                "wrong passcode; \(ErrorText.count(attemptsLeft, "attempt")) left before the TPM locks out "
                    + "(\(maxAttemptsLeft) before the max-attempts action)",
                hint: ErrorText.waitHint(retryAfter), exit: .passcode)
        }
        return ErrorText(
            "wrong passcode; \(ErrorText.count(attemptsLeft, "attempt")) left before the max-attempts action",
            hint: ErrorText.waitHint(retryAfter), exit: .passcode)
    }
}
