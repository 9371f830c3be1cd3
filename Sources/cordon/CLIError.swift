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
            self.init("cordond answered with an unknown error: \(error.name)", hint: versionHint)
        case .protocolViolation(let detail):
            self.init("unexpected answer from cordond: \(detail)", hint: versionHint)
        }
    }

    /// The passcode-throttling hint: how long to wait.
    static func waitHint(_ seconds: Double) -> String {
        guard seconds > 0 else { return "try again" }
        return "wait \(Format.seconds(seconds)), then try again"
    }
}

extension CLIError {
    /// The user-facing form of an error the agent returned.
    init(_ error: CordonError) {
        let unlockHint = "unlock first: `cordon unlock`"
        switch error {
        case .notInitialized:
            self.init(
                "the container is not initialized (no passcode is set)", hint: "run `cordon init` first",
                code: .initialization)
        case .alreadyInitialized:
            self.init(
                "the container is already initialized",
                hint: "change the passcode with `cordon passwd`, or erase everything with `cordon wipe --yes`",
                code: .initialization)
        case .wrongPasscode(let attemptsLeft, _) where attemptsLeft <= 0:
            self.init(
                "wrong passcode; no attempts left: the max-attempts action (lockout or wipe) was applied",
                hint: "see what remains with `cordon status`", code: .passcode)
        case .wrongPasscode(let attemptsLeft, let retryAfter):
            self.init(
                "wrong passcode; \(Format.count(attemptsLeft, "attempt")) left before the max-attempts action",
                hint: Self.waitHint(retryAfter), code: .passcode)
        case .retryLater(let retryAfter):
            self.init(
                "too many failed attempts: passcode checks are paused", hint: Self.waitHint(retryAfter),
                code: .passcode)
        case .passcodeRequired:
            self.init(
                "the passcode is required (the re-authentication grace has passed)",
                hint: "run `cordon unlock` on a terminal, or pipe the passcode to `cordon unlock --passcode-stdin`",
                code: .passcode)
        case .invalidPasscode(let reason):
            self.init(
                "the passcode does not meet the passcode rules: \(reason)",
                hint: "choose a passcode that meets the policy's rules (length and kind)", code: .invalidPasscode)
        case .locked:
            self.init("the container is locked", hint: unlockHint, code: .locked)
        case .busy:
            self.init("another passcode check is in progress", hint: "wait a moment, then try again", code: .passcode)
        case .revoked(let reason):
            self.init(
                "the key was revoked (\(reason)) while the passcode was being checked",
                hint: "run `cordon unlock` again", code: .passcode)
        case .notRegistered:
            self.init(
                "this connection has not registered an app",
                hint: "an app must register first (CordonApp.connect or `Register`)")
        case .alreadyRegistered(let appId):
            self.init(
                "this connection already registered the app \(appId)",
                hint: "use one connection per app")
        case .invalidAppId(let appId, let reason):
            self.init(
                "the app id '\(appId)' is not acceptable: \(reason)",
                hint: "use a reverse-DNS app id such as com.example.notes")
        case .keyUnavailable(let state):
            self.init("no key is available (state: \(state))", hint: unlockHint, code: .locked)
        case .notManaged(let appId):
            self.init(
                "the app \(appId) is not managed and gets no key",
                hint: "ask your administrator to list the app under apps.managed in the policy")
        case .subscriberTooSlow(let limit):
            self.init(
                "cordond dropped this subscriber: more than \(limit) events were left unread",
                hint: "read events promptly, then subscribe again")
        case .invalidToken:
            self.init(
                "the registration token is unknown or belongs to another process",
                hint: "register the app again")
        case .unknownSequence(let seq):
            self.init("event \(seq) was never sent to this app", hint: "acknowledge only events the app received")
        case .unknownAction(let action):
            self.init(
                "cordond does not decide the action '\(action)'",
                hint: "use one of: \(PolicyAction.allCases.map(\.rawValue).joined(separator: ", ")) "
                    + "(cordon and cordond may be different versions)",
                code: .usage)
        case .refused(let appId, let reason):
            self.init(
                "the policy refuses \(appId.isEmpty ? "this client" : "the app \(appId)"): \(reason)",
                hint: "see the rules with `cordon policy show`, or ask your administrator")
        case .internalError(let reason):
            self.init(
                "cordond failed internally: \(reason)",
                hint: "check cordond's log (`journalctl --user -u cordond`), then try again")
        case .unlockUnavailable(let reason):
            self.init(
                "cordond cannot ask for the passcode: \(reason)", hint: "run `cordon unlock` yourself", code: .passcode)
        case .unlockCancelled:
            self.init("the unlock request was cancelled", hint: "run `cordon unlock` to unlock", code: .cancelled)
        case .unlockTimedOut(let seconds):
            self.init(
                "the container was not unlocked within \(Format.seconds(seconds))", hint: "run `cordon unlock`",
                code: .locked)
        case .denied(let action, let reason, let rules):
            self.init(
                "the policy denies \(action): \(reason)" + (rules.isEmpty ? "" : " (\(rules.joined(separator: ", ")))"),
                hint: "see why with `cordon policy explain --action \(action)`, or ask your administrator")
        case .targetNotRunning(let appId):
            self.init("the app \(appId) is not running", hint: "start it, then try again (see `cordon apps`)")
        case .pasteboardEmpty:
            self.init("the managed pasteboard is empty", hint: "copy something first: `cordon pasteboard copy TEXT`")
        case .contentTooLarge(let limit):
            self.init(
                "the content is larger than the pasteboard's limit of \(limit / 1024) KiB",
                hint: "copy less at a time", code: .usage)
        case .invalidProcess(let pid, let reason):
            self.init(
                "cannot register process \(pid): \(reason)",
                hint: "register only your own child processes (as `cordon run` does)")
        case .processChanged(let appId, let reason):
            self.init(
                "the agent no longer trusts this process as \(appId): \(reason)",
                hint: "restart the app unmodified, without a debugger or injected libraries")
        case .processNotHardened(let appId):
            self.init(
                "\(appId) is dumpable: any program of this user could read its key from its memory, so the agent gives it none",
                hint: "make the app non-dumpable after it registers (prctl(PR_SET_DUMPABLE, 0); CordonKit does)")
        case .registeredOnBehalf(let appId):
            self.init(
                "\(appId) was registered on another process's behalf, which gets enforcement but no key",
                hint: "the app must register itself (CordonKit) to get its key")
        case .appIdInUse(let appId, let pid):
            self.init(
                "\(appId) is already registered by process \(pid)",
                hint: "close the running instance first (see `cordon apps`)")
        case .tooManyConnections(let limit):
            self.init(
                "cordond refused the connection: this user already holds \(limit) connections",
                hint: "close programs that keep connections to cordond open (see `cordon apps`), then try again")
        case .tooManyProcessConnections(let pid, let limit):
            self.init(
                "cordond refused the connection: process \(pid) already holds \(limit) connections",
                hint: "a program should share a few connections; close some, then try again")
        case .foreignSender(let pid, let sender):
            self.init(
                "cordond closed the connection: process \(sender) wrote on the connection process \(pid) opened",
                hint: "each process must open its own connection to cordond; do not share or pass one on")
        case .connectionIdle(let seconds):
            self.init(
                "cordond closed the connection: it was idle for \(Format.seconds(seconds)) without registering an app",
                hint: "run the command again")
        // MARK: Storage (#13)
        case .containerLocked(let appId, let state):
            self.init(
                "the storage of \(appId) is closed: the container is \(state)", hint: unlockHint,
                code: .locked)
        case .recordNotFound(let namespace, let name):
            self.init(
                "no record named \"\(name)\" in namespace \"\(namespace)\"",
                hint: "list the records with `cordon storage ls --app ID`")
        case .valueTooLarge(let size, let limit):
            self.init(
                "the value is \(size) bytes, over the storage limit of \(limit) bytes",
                hint: "store larger data in a file", code: .usage)
        case .invalidRecordName(let field, let reason):
            self.init(
                "the record's \(field) is not acceptable: \(reason)", hint: "use a shorter name without NUL bytes",
                code: .usage)
        case .recordTampered(let namespace, let name):
            self.init(
                "the record \"\(name)\" in namespace \"\(namespace)\" does not open: it was changed, copied or wiped",
                hint: "delete it with `cordon storage rm` and store it again")
        case .storageFailed(let appId, let reason):
            self.init(
                "the storage of \(appId) could not be written: \(reason); nothing stored was changed",
                hint: "free disk space, then try again")
        // MARK: Tokens (#14)
        case .duplicateToken(let serial):
            self.init("token \(serial) is imported already", hint: "see it with `cordon token list`")
        case .tokenNotFound(let serial):
            self.init("no token has the serial \(serial)", hint: "list the tokens with `cordon token list`")
        case .tokenExpired(let day):
            self.init("the token expired on \(day)", hint: "ask your administrator for a new token")
        case .tokenBoundElsewhere(let reason):
            self.init(
                "the token cannot be used on this device: \(reason)",
                hint: "ask for a token issued to this device (`cordon token list` shows its device id)")
        case .tokenFormat(let field, let reason):
            self.init("the token's \(field) is not acceptable: \(reason)", hint: "check the input", code: .usage)
        case .tokenLimit(let maximum):
            self.init(
                "\(maximum) tokens are imported, the most the policy allows",
                hint: "remove one with `cordon token rm SERIAL` first")
        case .pinRequired(let serial):
            self.init("token \(serial) needs its PIN", hint: "give it with `--pin`", code: .usage)
        case .tokenKindNotAllowed(let kind):
            self.init(
                "the policy does not allow importing \(kind) tokens",
                hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
        case .notCodeReader(let appId):
            self.init(
                "\(appId) may not read token codes",
                hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
        case .tokensLocked(let state):
            self.init("the tokens are closed: the container is \(state)", hint: unlockHint, code: .locked)
        // MARK: TPM passcode sealing (#12)
        case .hardwareRequired(let reason):
            self.init(
                "the policy requires a TPM (passcode.hardware: required) and none is usable: \(reason)",
                hint: "check the TPM with `cordon doctor`; an administrator decides passcode.hardware",
                code: .initialization)
        case .hardwareLockedOut(let delay):
            self.init(
                "the TPM is in dictionary-attack lockout after too many wrong passcodes",
                hint: Self.waitHint(delay))
        case .hardwareKeyRejected(let reason):
            self.init(
                "the TPM refuses the sealed key: \(reason)",
                hint: "restore with the recovery key printed at init: `cordon init --recovery`")
        case .hardwareUnavailable(let reason):
            self.init(
                "the key is sealed by a TPM that cannot be reached: \(reason)",
                hint: "check the TPM with `cordon doctor`, or restore with `cordon init --recovery`")
        case .invalidRecoveryKey(let reason):
            self.init(
                "the recovery key is not accepted: \(reason)",
                hint: "type the recovery key printed at `cordon init` exactly, in its groups of digits")
        // MARK: CT-KIP (#14)
        case .ctkipFailed(let server, let step, let reason):
            self.init(
                "CT-KIP provisioning from \(server) failed at \(step): \(reason); nothing was imported",
                hint: "check the URL and the activation code, or ask your administrator for a new one")
        case .ctkipInsecureNotAllowed(let server):
            self.init(
                "the policy does not allow importing from \(server) without certificate validation",
                hint: "tokens.ctkipAllowInsecure decides; ask your administrator, or fix the server's certificate")
        // MARK: Fingerprint unlock (#15)
        case .biometricsDisabled:
            self.init(
                "fingerprint unlock is disabled by the policy (passcode.biometrics: disabled)",
                hint: "unlock with the passcode: `cordon unlock`")
        case .biometricsNotEnabled:
            self.init(
                "fingerprint unlock is not turned on",
                hint: "turn it on with `cordon biometrics on`, or unlock with the passcode")
        case .biometricsPasscodeNeeded(let reason):
            self.init("the passcode is needed: \(reason)", hint: "unlock with the passcode: `cordon unlock`")
        case .biometricsUnavailable(let reason):
            self.init(
                "fingerprint unlock is unavailable: \(reason)",
                hint: "enroll a finger with `fprintd-enroll`, or unlock with the passcode: `cordon unlock`")
        // MARK: Posture (#16)
        case .postureRefused(let appId, let check, let evidence):
            self.init(
                "\(appId) is refused: the device posture check \(check) fails (\(evidence))",
                hint: "see `cordon posture`; the policy's conditions section decides")
        case .invalidNonce(let reason):
            self.init("invalid nonce: \(reason)", hint: "use 1 to 128 letters, digits or -_.~+/=")
        // MARK: Identity broker (#15)
        case .identityUnknownDomain(let domain):
            self.init(
                "no identity provider signs in for \(domain)",
                hint: "see identity.domains in `cordon policy show`, or ask your administrator")
        case .identityUnknownProvider(let provider, let known):
            let names = known.isEmpty ? "the policy declares none" : "known: \(known.joined(separator: ", "))"
            self.init(
                provider.isEmpty
                    ? "name the identity provider (\(names))" : "no identity provider \(provider) (\(names))",
                hint: known.isEmpty
                    ? "see identity.providers and identity.cpaProviders in `cordon policy show`"
                    : "give one with `--provider`")
        case .identityNotInAccessGroup(let appId, let domain):
            self.init(
                "\(appId) is in no access group with \(domain): it gets no token",
                hint: "identity.accessGroups decides; ask your administrator")
        case .identityLocked(let state):
            self.init("no sign-in and no token while the container is \(state)", hint: unlockHint, code: .locked)
        case .signInCancelled(let provider, let step):
            self.init("the sign-in with \(provider) was cancelled (\(step))", hint: "sign in again: `cordon login`")
        case .signInExpired(let provider, let step):
            self.init(
                "the sign-in with \(provider) expired before it was approved (\(step))",
                hint: "sign in again with `cordon login` and approve it in time")
        case .signInFailed(let provider, let step, let reason):
            self.init(
                "the sign-in with \(provider) failed at \(step): \(reason)",
                hint: "check the network and `cordon identity status`, then `cordon login` again")
        case .sessionExpired(let provider):
            self.init(
                "the session with \(provider) expired offline (identity.offlineGraceMinutes)",
                hint: "sign in again when the provider is reachable: `cordon login`")
        }
    }
}
