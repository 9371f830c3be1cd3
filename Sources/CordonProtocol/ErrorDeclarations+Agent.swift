extension ErrorDeclarations {
    /// The errors of `io.cordon.Agent` (passcode, lock, key, connections, TPM, fingerprint), in IDL order.
    static let agent: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Agent.NotInitialized",
            "No passcode is set yet: call Initialize.",
            parameters: [],
            decode: { _ in .notInitialized },
            explain: { _ in
                ErrorText(
                    "the container is not initialized (no passcode is set)", hint: "run `cordon init` first",
                    exit: .initialization)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.AlreadyInitialized",
            "A passcode is already set.",
            parameters: [],
            decode: { _ in .alreadyInitialized },
            explain: { _ in
                ErrorText(
                    "the container is already initialized",
                    hint: "change the passcode with `cordon passwd`, or erase everything with `cordon wipe --yes`",
                    exit: .initialization)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.WrongPasscode",
            [
                "The passcode was wrong. attemptsLeft: before the tighter limit, the max-attempts action's or",
                "the TPM's lockout's (then hardwareAttemptsLeft is the TPM's figure and maxAttemptsLeft the",
                "max-attempts action's). maxAttemptsAction is set when no attempt is left and the action was",
                "applied: wipe means this attempt erased the container.",
            ],
            parameters: [
                .int("attemptsLeft"), .float("retryAfterSeconds"), .optionalInt("maxAttemptsLeft"),
                .optionalInt("hardwareAttemptsLeft"), .optionalString("maxAttemptsAction"),
            ],
            decode: {
                .wrongPasscode(
                    attemptsLeft: $0.int("attemptsLeft"), retryAfterSeconds: $0.double("retryAfterSeconds"),
                    maxAttemptsLeft: $0.optionalInt("maxAttemptsLeft"),
                    hardwareAttemptsLeft: $0.optionalInt("hardwareAttemptsLeft"),
                    maxAttemptsAction: $0.optionalString("maxAttemptsAction"))
            },
            explain: { p in WrongPasscodeText.explain(p) }),
        ErrorDeclaration(
            "io.cordon.Agent.RetryLater",
            "Too many recent failures: try again after the delay.",
            parameters: [.float("retryAfterSeconds")],
            decode: { .retryLater(retryAfterSeconds: $0.double("retryAfterSeconds")) },
            explain: { p in
                let retryAfter = p.double("retryAfterSeconds")
                return ErrorText(
                    "too many failed attempts: passcode checks are paused", hint: ErrorText.waitHint(retryAfter),
                    exit: .passcode)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.PasscodeRequired",
            "The passcode is required.",
            parameters: [],
            decode: { _ in .passcodeRequired },
            explain: { _ in
                ErrorText(
                    "the passcode is required (the re-authentication grace has passed)",
                    hint: "run `cordon unlock` on a terminal, or pipe the passcode to `cordon unlock --passcode-stdin`",
                    exit: .passcode)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.InvalidPasscode",
            "The passcode does not meet the rules.",
            parameters: [.string("reason")],
            decode: { .invalidPasscode(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the passcode does not meet the passcode rules: \(reason)",
                    hint: "choose a passcode that meets the policy's rules (length and kind)", exit: .invalidPasscode)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.Locked",
            "The container must be unlocked for this.",
            parameters: [],
            decode: { _ in .locked },
            explain: { _ in ErrorText("the container is locked", hint: ErrorText.unlockHint, exit: .locked) }),
        ErrorDeclaration(
            "io.cordon.Agent.Busy",
            "Another passcode check is in progress.",
            parameters: [],
            decode: { _ in .busy },
            explain: { _ in
                ErrorText(
                    "another passcode check is in progress", hint: "wait a moment, then try again", exit: .passcode)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.Revoked",
            "The key was revoked while the passcode was being checked: unlock again.",
            parameters: [.string("reason")],
            decode: { .revoked(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the key was revoked (\(reason)) while the passcode was being checked",
                    hint: "run `cordon unlock` again", exit: .passcode)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.InternalError",
            "The agent failed internally.",
            parameters: [.string("reason")],
            decode: { .internalError(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "cordond failed internally: \(reason)",
                    hint: "check cordond's log (`journalctl --user -u cordond`), then try again")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.InvalidMessage",
            "The message is not a valid varlink call; the connection is closed.",
            parameters: [.string("reason")],
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "cordond could not read the request (\(reason)) and closed the connection",
                    hint: "use cordon and cordond from the same release; if they are, report this with cordond's log "
                        + "(`journalctl --user -u cordond`)")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.MessageTooLarge",
            "The message exceeds the size limit; the connection is closed.",
            parameters: [.int("limit")],
            explain: { p in
                let limit = p.int("limit")
                return ErrorText(
                    "the request is larger than cordond accepts (\(limit) bytes in one message); cordond closed the "
                        + "connection",
                    hint: "pass shorter values (a token import is at most 16 KiB), then try again",
                    exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.TooManyConnections",
            "Too many connections from this user; the connection is closed.",
            parameters: [.int("limit")],
            decode: { .tooManyConnections(limit: $0.int("limit")) },
            explain: { p in
                let limit = p.int("limit")
                return ErrorText(
                    "cordond refused the connection: this user already holds \(limit) connections",
                    hint: "close programs that keep connections to cordond open (see `cordon apps`), then try again")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.TooManyProcessConnections",
            "Too many connections from this process; the connection is closed.",
            parameters: [.int("pid"), .int("limit")],
            decode: { .tooManyProcessConnections(pid: $0.int("pid"), limit: $0.int("limit")) },
            explain: { p in
                let pid = p.int("pid")
                let limit = p.int("limit")
                return ErrorText(
                    "cordond refused the connection: process \(pid) already holds \(limit) connections",
                    hint: "a program should share a few connections; close some, then try again")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.ConnectionIdle",
            "The connection was idle too long without registering an app; it is closed.",
            parameters: [.float("seconds")],
            decode: { .connectionIdle(seconds: $0.double("seconds")) },
            explain: { p in
                let seconds = p.double("seconds")
                return ErrorText(
                    "cordond closed the connection: it was idle for \(ErrorText.seconds(seconds)) without registering an app",
                    hint: "run the command again")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.ForeignSender",
            [
                "A message was written by process `sender`, not by the process `pid` that connected; it",
                "is not served and the connection is closed.",
            ],
            parameters: [.int("pid"), .int("sender")],
            decode: { .foreignSender(pid: $0.int("pid"), sender: $0.int("sender")) },
            explain: { p in
                let pid = p.int("pid")
                let sender = p.int("sender")
                return ErrorText(
                    "cordond closed the connection: process \(sender) wrote on the connection process \(pid) opened",
                    hint: "each process must open its own connection to cordond; do not share or pass one on")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.HardwareRequired",
            "The policy requires a TPM (passcode.hardware: required) and none is usable.",
            parameters: [.string("reason")],
            decode: { .hardwareRequired(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the policy requires a TPM (passcode.hardware: required) and none is usable: \(reason)",
                    hint: "check the TPM with `cordon doctor`; an administrator decides passcode.hardware",
                    exit: .initialization)
            }),
        ErrorDeclaration(
            "io.cordon.Agent.HardwareLockedOut",
            "The TPM sealing the key is in dictionary-attack lockout.",
            parameters: [.float("retryAfterSeconds")],
            decode: { .hardwareLockedOut(retryAfterSeconds: $0.double("retryAfterSeconds")) },
            explain: { p in
                let delay = p.double("retryAfterSeconds")
                return ErrorText(
                    "the TPM is in dictionary-attack lockout after too many wrong passcodes",
                    hint: ErrorText.waitHint(delay))
            }),
        ErrorDeclaration(
            "io.cordon.Agent.HardwareKeyRejected",
            "The TPM refuses the sealed key (cleared, replaced, or the bound PCRs changed): use the recovery key.",
            parameters: [.string("reason")],
            decode: { .hardwareKeyRejected(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the TPM refuses the sealed key: \(reason)",
                    hint: "restore with the recovery key printed at init: `cordon init --recovery`")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.StateRolledBack",
            "The database's security state is older than the TPM's counter, or was edited: nothing opens.",
            parameters: [.string("reason")],
            decode: { .stateRolledBack(reason: $0.string("reason")) },
            explain: { p in
                ErrorText(
                    "the container's state is refused as rolled back: \(p.string("reason"))",
                    hint:
                        "put back the database the agent last wrote, or erase everything and start again with `cordon wipe --yes` then `cordon init`"
                )
            }),
        ErrorDeclaration(
            "io.cordon.Agent.HardwareUnavailable",
            "The TPM sealing the key cannot be reached.",
            parameters: [.string("reason")],
            decode: { .hardwareUnavailable(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the key is sealed by a TPM that cannot be reached: \(reason)",
                    hint: "check the TPM with `cordon doctor`, or restore with `cordon init --recovery`")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.InvalidRecoveryKey",
            "The recovery key does not open the stored key.",
            parameters: [.string("reason")],
            decode: { .invalidRecoveryKey(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the recovery key is not accepted: \(reason)",
                    hint: "type the recovery key printed at `cordon init` exactly, in its groups of digits")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.BiometricsDisabled",
            "passcode.biometrics is disabled: only the passcode unlocks.",
            parameters: [],
            decode: { _ in .biometricsDisabled },
            explain: { _ in
                ErrorText(
                    "fingerprint unlock is disabled by the policy (passcode.biometrics: disabled)",
                    hint: "unlock with the passcode: `cordon unlock`")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.BiometricsNotEnabled",
            "The user has not opted into fingerprint unlock.",
            parameters: [],
            decode: { _ in .biometricsNotEnabled },
            explain: { _ in
                ErrorText(
                    "fingerprint unlock is not turned on",
                    hint: "turn it on with `cordon biometrics on`, or unlock with the passcode")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.BiometricsPasscodeNeeded",
            "The first unlock after the agent starts or after a logout, or 48 hours after the last passcode unlock: the passcode unlocks.",
            parameters: [.string("reason")],
            decode: { .biometricsPasscodeNeeded(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText("the passcode is needed: \(reason)", hint: "unlock with the passcode: `cordon unlock`")
            }),
        ErrorDeclaration(
            "io.cordon.Agent.BiometricsUnavailable",
            "fprintd, a reader or an enrolled finger is missing, or the reader failed.",
            parameters: [.string("reason")],
            decode: { .biometricsUnavailable(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "fingerprint unlock is unavailable: \(reason)",
                    hint: "enroll a finger with `fprintd-enroll`, or unlock with the passcode: `cordon unlock`")
            }),
    ]
}
