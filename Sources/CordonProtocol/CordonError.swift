/// Every error the agent returns, with a stable varlink name and typed parameters.
///
/// The server throws these, the wire carries them as varlink errors, and CordonKit decodes
/// them back, so a name maps one-to-one across the three.
public enum CordonError: Error, Sendable, Equatable {
    /// No passcode has been set yet: run `Initialize` first.
    case notInitialized
    /// `Initialize` was called but a passcode is already set.
    case alreadyInitialized
    /// The passcode was wrong; `attemptsLeft` before the max-attempts action.
    case wrongPasscode(attemptsLeft: Int, retryAfterSeconds: Double)
    /// Attempts are throttled after failures: try again after the delay.
    case retryLater(retryAfterSeconds: Double)
    /// The passcode is needed (outside the re-authentication grace).
    case passcodeRequired
    /// The new passcode does not meet the passcode rules.
    case invalidPasscode(reason: String)
    /// The operation needs the container unlocked.
    case locked
    /// Another passcode check is in progress.
    case busy
    /// The key was revoked (logout, shutdown) while the passcode was being checked; unlock again.
    case revoked(reason: String)
    /// The call must be made by a registered app: call `Register` first.
    case notRegistered
    /// This connection already registered an app.
    case alreadyRegistered(appId: String)
    /// The app id is not acceptable.
    case invalidAppId(appId: String, reason: String)
    /// No key is available: the container is locked without a key, or uninitialized.
    case keyUnavailable(state: String)
    /// The app is registered unmanaged and gets no key.
    case notManaged(appId: String)
    /// The subscriber did not read its events; the agent disconnected it.
    case subscriberTooSlow(limit: Int)
    /// The registration token is unknown or belongs to another process.
    case invalidToken
    /// The acknowledged sequence number is not one the app was sent.
    case unknownSequence(seq: Int)
    /// The action is not one the policy decides.
    case unknownAction(action: String)
    /// The policy refuses this client (unknown app, executable mismatch, a blocking condition).
    case refused(appId: String, reason: String)
    /// The agent failed internally (for example the database is unavailable).
    case internalError(reason: String)
    /// `RequestUnlock`: no passcode prompt can be shown (no pinentry, no display or terminal).
    case unlockUnavailable(reason: String)
    /// `RequestUnlock`: the user cancelled the passcode prompt.
    case unlockCancelled
    /// `RequestUnlock`: the container was not unlocked within the time asked for.
    case unlockTimedOut(seconds: Double)
    /// The policy denies the action (pasteboard, document hand-off); `rules` say why.
    case denied(action: String, reason: String, rules: [String])
    /// The target app of a document hand-off is not running (not registered and subscribed).
    case targetNotRunning(appId: String)
    /// The managed pasteboard holds nothing (or nothing this app may paste).
    case pasteboardEmpty
    /// The content is larger than the agent accepts.
    case contentTooLarge(limit: Int)
    /// `Register(pid:)` named a process this connection may not register for.
    case invalidProcess(pid: Int, reason: String)
    /// The registered process is no longer the one that registered, or no longer passes the
    /// checks it passed then (it exec'd, a debugger attached, a library was injected): the call is
    /// refused and, where the policy says so, the registration ends.
    case processChanged(appId: String, reason: String)
    /// The registered process is still dumpable, so any program of its user could read a secret
    /// out of its memory: no key or data goes to it until it makes itself non-dumpable
    /// (`prctl(PR_SET_DUMPABLE, 0)`, which CordonKit does right after registering).
    case processNotHardened(appId: String)
    /// The registration was made on another process's behalf (`cordon run`): it gets enforcement,
    /// never a key, data or the pasteboard.
    case registeredOnBehalf(appId: String)
    /// A live process is already registered as this managed app.
    case appIdInUse(appId: String, pid: Int)
    /// The user holds as many connections as the agent allows; this one is closed.
    case tooManyConnections(limit: Int)
    /// The connecting process holds as many connections as one process may; this one is closed.
    case tooManyProcessConnections(pid: Int, limit: Int)
    /// The connection was idle for `seconds` without registering an app; the agent closed it.
    case connectionIdle(seconds: Double)
    /// A message on the connection was written by process `sender`, not by process `pid` that
    /// connected (a process holding a copy of another's socket: a parent, a child after `fork`,
    /// a receiver of the descriptor): it is not served and the connection is closed.
    case foreignSender(pid: Int, sender: Int)

    // MARK: Storage (#13)

    /// The app's storage is closed: the container is locked and the app's `storage.dataAccess` is
    /// `whenUnlocked`, or the key is not held (`state`: the container's state).
    case containerLocked(appId: String, state: String)
    /// No record has this name in this namespace.
    case recordNotFound(namespace: String, name: String)
    /// A value is longer than the storage bound (`size` and `limit` in bytes).
    case valueTooLarge(size: Int, limit: Int)
    /// A namespace, name or prefix is not acceptable (`field` names which, `reason` says why).
    case invalidRecordName(field: String, reason: String)
    /// A stored record does not open: changed on disk, copied from another slot, or sealed under
    /// a key the app no longer has (a selective wipe).
    case recordTampered(namespace: String, name: String)
    /// The storage file could not be read or written (a full disk, an I/O error); nothing stored
    /// was changed.
    case storageFailed(appId: String, reason: String)

    // MARK: Tokens (#14)

    /// A token with this serial is imported already (nothing changed).
    case duplicateToken(serial: String)
    /// No token has this serial.
    case tokenNotFound(serial: String)
    /// The token expired at 00:00:00 UTC of `expiryDay` (YYYY-MM-DD).
    case tokenExpired(expiryDay: String)
    /// The token is bound to another device (or needs a device id): `reason` says which.
    case tokenBoundElsewhere(reason: String)
    /// The import or a parameter is not acceptable: `field` names what (`data`, `ctfData`, `secret`,
    /// `password`, `pin`, `nickname`, …), `reason` says why. Never carries a secret.
    case tokenFormat(field: String, reason: String)
    /// `tokens.maxTokens` tokens are imported already.
    case tokenLimit(maximum: Int)
    /// The token needs a PIN (PINPad or key fob) and none was given or stored.
    case pinRequired(serial: String)
    /// The policy's `tokens.importKinds` does not allow importing this kind.
    case tokenKindNotAllowed(kind: String)
    /// The caller may not read codes: not in `tokens.codeReaders`, or the CLI when
    /// `tokens.cliReadsCodes` is false (`appId`: the caller).
    case notCodeReader(appId: String)
    /// The tokens are closed: locked under `tokens.dataAccess` `whenUnlocked`, or the key is not held.
    case tokensLocked(state: String)
    // MARK: TPM passcode sealing (#12)
    /// The policy requires a TPM (`passcode.hardware: required`) and none is usable: `reason` says why.
    case hardwareRequired(reason: String)
    /// The TPM that seals the key is in dictionary-attack lockout; it takes an attempt again in
    /// `retryAfterSeconds`.
    case hardwareLockedOut(retryAfterSeconds: Double)
    /// The TPM refuses the sealed key: it was cleared or replaced, or the PCRs the key is bound to
    /// changed. Only the recovery key (`cordon init --recovery`) restores the container.
    case hardwareKeyRejected(reason: String)
    /// The key is sealed by a TPM that cannot be reached now.
    case hardwareUnavailable(reason: String)
    /// The recovery key does not open the stored key, or the container has none.
    case invalidRecoveryKey(reason: String)
    // MARK: CT-KIP (#14)
    /// A CT-KIP provisioning from `server` (host) failed at `step` (`ClientHello`, `ServerHello`,
    /// `ClientNonce`, `ServerFinished`): `reason` says why (a certificate problem, a timeout, a
    /// malformed or lying answer). Never holds the activation code or the seed; nothing was stored.
    case ctkipFailed(server: String, step: String, reason: String)
    /// A CT-KIP import asked to skip certificate validation and `tokens.ctkipAllowInsecure` is false.
    case ctkipInsecureNotAllowed(server: String)
    // MARK: Fingerprint unlock (#15)
    /// `passcode.biometrics` is `disabled`: only the passcode unlocks.
    case biometricsDisabled
    /// The user has not opted into fingerprint unlock (`cordon biometrics on`).
    case biometricsNotEnabled
    /// A fingerprint may not unlock now: the first unlock after the agent starts, or the
    /// re-authentication limit passed (`reason` says which). The passcode unlocks.
    case biometricsPasscodeNeeded(reason: String)
    /// fprintd, a reader or an enrolled finger is missing, or the reader failed: `reason` says which.
    case biometricsUnavailable(reason: String)
    // MARK: Posture (#16)
    /// A posture check the policy's `conditions` set to `block` or `wipe` fails (or is unknown and
    /// `conditions.postureUnknown` is `fail`): the registration is refused; `evidence` is what was read.
    case postureRefused(appId: String, check: String, evidence: String)
    /// A posture report's nonce is not 1 to 128 characters of letters, digits and `-_.~+/=`.
    case invalidNonce(reason: String)
    // MARK: Identity broker (#15)
    /// No provider signs in for `domain` (the policy's `identity.domains`).
    case identityUnknownDomain(domain: String)
    /// No provider has this name, or none was named and the policy has several (`known`).
    case identityUnknownProvider(provider: String, known: [String])
    /// The app is in no access group (`identity.accessGroups`) with `domain`: it gets no token.
    case identityNotInAccessGroup(appId: String, domain: String)
    /// The container is not unlocked (`state`): no token is given and no sign-in starts.
    case identityLocked(state: String)
    /// The sign-in with `provider` was cancelled at `step` (by the user, a lock or a sign-out).
    case signInCancelled(provider: String, step: String)
    /// The sign-in with `provider` expired at `step` before the user approved it.
    case signInExpired(provider: String, step: String)
    /// The sign-in or refresh with `provider` failed at `step`: `reason` says why (never a token,
    /// code, verifier or secret).
    case signInFailed(provider: String, step: String, reason: String)
    /// The session with `provider` went past `identity.offlineGraceMinutes` without reaching it:
    /// no token until a sign-in succeeds.
    case sessionExpired(provider: String)

    /// The varlink error name.
    public var varlinkName: String {
        switch self {
        case .notInitialized: return "io.cordon.Agent.NotInitialized"
        case .alreadyInitialized: return "io.cordon.Agent.AlreadyInitialized"
        case .wrongPasscode: return "io.cordon.Agent.WrongPasscode"
        case .retryLater: return "io.cordon.Agent.RetryLater"
        case .passcodeRequired: return "io.cordon.Agent.PasscodeRequired"
        case .invalidPasscode: return "io.cordon.Agent.InvalidPasscode"
        case .locked: return "io.cordon.Agent.Locked"
        case .busy: return "io.cordon.Agent.Busy"
        case .revoked: return "io.cordon.Agent.Revoked"
        case .internalError: return "io.cordon.Agent.InternalError"
        case .tooManyConnections: return "io.cordon.Agent.TooManyConnections"
        case .tooManyProcessConnections: return "io.cordon.Agent.TooManyProcessConnections"
        case .foreignSender: return "io.cordon.Agent.ForeignSender"
        case .connectionIdle: return "io.cordon.Agent.ConnectionIdle"
        case .notRegistered: return "io.cordon.App.NotRegistered"
        case .alreadyRegistered: return "io.cordon.App.AlreadyRegistered"
        case .invalidAppId: return "io.cordon.App.InvalidAppId"
        case .keyUnavailable: return "io.cordon.App.KeyUnavailable"
        case .notManaged: return "io.cordon.App.NotManaged"
        case .subscriberTooSlow: return "io.cordon.App.SubscriberTooSlow"
        case .invalidToken: return "io.cordon.App.InvalidToken"
        case .unknownSequence: return "io.cordon.App.UnknownSequence"
        case .unknownAction: return "io.cordon.App.UnknownAction"
        case .refused: return "io.cordon.App.Refused"
        case .unlockUnavailable: return "io.cordon.App.UnlockUnavailable"
        case .unlockCancelled: return "io.cordon.App.UnlockCancelled"
        case .unlockTimedOut: return "io.cordon.App.UnlockTimedOut"
        case .denied: return "io.cordon.App.Denied"
        case .targetNotRunning: return "io.cordon.App.TargetNotRunning"
        case .invalidProcess: return "io.cordon.App.InvalidProcess"
        case .processChanged: return "io.cordon.App.ProcessChanged"
        case .processNotHardened: return "io.cordon.App.ProcessNotHardened"
        case .registeredOnBehalf: return "io.cordon.App.RegisteredOnBehalf"
        case .appIdInUse: return "io.cordon.App.AppIdInUse"
        case .pasteboardEmpty: return "io.cordon.Pasteboard.Empty"
        case .contentTooLarge: return "io.cordon.Pasteboard.ContentTooLarge"
        // MARK: Storage (#13)
        case .containerLocked: return "io.cordon.Storage.ContainerLocked"
        case .recordNotFound: return "io.cordon.Storage.NotFound"
        case .valueTooLarge: return "io.cordon.Storage.ValueTooLarge"
        case .invalidRecordName: return "io.cordon.Storage.InvalidName"
        case .recordTampered: return "io.cordon.Storage.Tampered"
        case .storageFailed: return "io.cordon.Storage.StorageFailed"
        // MARK: Tokens (#14)
        case .duplicateToken: return "io.cordon.Tokens.DuplicateToken"
        case .tokenNotFound: return "io.cordon.Tokens.TokenNotFound"
        case .tokenExpired: return "io.cordon.Tokens.TokenExpired"
        case .tokenBoundElsewhere: return "io.cordon.Tokens.TokenBoundElsewhere"
        case .tokenFormat: return "io.cordon.Tokens.TokenFormat"
        case .tokenLimit: return "io.cordon.Tokens.TokenLimit"
        case .pinRequired: return "io.cordon.Tokens.PinRequired"
        case .tokenKindNotAllowed: return "io.cordon.Tokens.KindNotAllowed"
        case .notCodeReader: return "io.cordon.Tokens.NotCodeReader"
        case .tokensLocked: return "io.cordon.Tokens.Locked"
        // MARK: TPM passcode sealing (#12)
        case .hardwareRequired: return "io.cordon.Agent.HardwareRequired"
        case .hardwareLockedOut: return "io.cordon.Agent.HardwareLockedOut"
        case .hardwareKeyRejected: return "io.cordon.Agent.HardwareKeyRejected"
        case .hardwareUnavailable: return "io.cordon.Agent.HardwareUnavailable"
        case .invalidRecoveryKey: return "io.cordon.Agent.InvalidRecoveryKey"
        // MARK: CT-KIP (#14)
        case .ctkipFailed: return "io.cordon.Tokens.CTKIPFailed"
        case .ctkipInsecureNotAllowed: return "io.cordon.Tokens.CTKIPInsecureNotAllowed"
        // MARK: Fingerprint unlock (#15)
        case .biometricsDisabled: return "io.cordon.Agent.BiometricsDisabled"
        case .biometricsNotEnabled: return "io.cordon.Agent.BiometricsNotEnabled"
        case .biometricsPasscodeNeeded: return "io.cordon.Agent.BiometricsPasscodeNeeded"
        case .biometricsUnavailable: return "io.cordon.Agent.BiometricsUnavailable"
        // MARK: Posture (#16)
        case .postureRefused: return "io.cordon.App.PostureRefused"
        case .invalidNonce: return "io.cordon.Posture.InvalidNonce"
        // MARK: Identity broker (#15)
        case .identityUnknownDomain: return "io.cordon.Identity.UnknownDomain"
        case .identityUnknownProvider: return "io.cordon.Identity.UnknownProvider"
        case .identityNotInAccessGroup: return "io.cordon.Identity.NotInAccessGroup"
        case .identityLocked: return "io.cordon.Identity.Locked"
        case .signInCancelled: return "io.cordon.Identity.SignInCancelled"
        case .signInExpired: return "io.cordon.Identity.SignInExpired"
        case .signInFailed: return "io.cordon.Identity.SignInFailed"
        case .sessionExpired: return "io.cordon.Identity.SessionExpired"
        }
    }

    /// The varlink error parameters.
    public var varlinkParameters: [String: JSONValue] {
        switch self {
        case .wrongPasscode(let left, let delay):
            return ["attemptsLeft": .int(left), "retryAfterSeconds": .double(delay)]
        case .retryLater(let delay): return ["retryAfterSeconds": .double(delay)]
        case .invalidPasscode(let reason), .internalError(let reason), .revoked(let reason),
            .unlockUnavailable(let reason):
            return ["reason": .string(reason)]
        case .unlockTimedOut(let seconds): return ["seconds": .double(seconds)]
        case .denied(let action, let reason, let rules):
            return ["action": .string(action), "reason": .string(reason), "rules": .array(rules.map { .string($0) })]
        case .targetNotRunning(let appId): return ["appId": .string(appId)]
        case .contentTooLarge(let limit), .tooManyConnections(let limit): return ["limit": .int(limit)]
        case .tooManyProcessConnections(let pid, let limit): return ["pid": .int(pid), "limit": .int(limit)]
        case .foreignSender(let pid, let sender): return ["pid": .int(pid), "sender": .int(sender)]
        case .connectionIdle(let seconds): return ["seconds": .double(seconds)]
        case .invalidProcess(let pid, let reason): return ["pid": .int(pid), "reason": .string(reason)]
        case .alreadyRegistered(let appId), .notManaged(let appId), .registeredOnBehalf(let appId),
            .processNotHardened(let appId):
            return ["appId": .string(appId)]
        case .processChanged(let appId, let reason): return ["appId": .string(appId), "reason": .string(reason)]
        case .appIdInUse(let appId, let pid): return ["appId": .string(appId), "pid": .int(pid)]
        case .invalidAppId(let appId, let reason): return ["appId": .string(appId), "reason": .string(reason)]
        case .keyUnavailable(let state): return ["state": .string(state)]
        case .subscriberTooSlow(let limit): return ["limit": .int(limit)]
        case .unknownSequence(let seq): return ["seq": .int(seq)]
        case .unknownAction(let action): return ["action": .string(action)]
        case .refused(let appId, let reason): return ["appId": .string(appId), "reason": .string(reason)]
        case .notInitialized, .alreadyInitialized, .passcodeRequired, .locked, .busy, .notRegistered,
            .invalidToken, .unlockCancelled, .pasteboardEmpty:
            return [:]
        // MARK: Storage (#13)
        case .containerLocked(let appId, let state): return ["appId": .string(appId), "state": .string(state)]
        case .recordNotFound(let namespace, let name), .recordTampered(let namespace, let name):
            return ["namespace": .string(namespace), "name": .string(name)]
        case .valueTooLarge(let size, let limit): return ["size": .int(size), "limit": .int(limit)]
        case .invalidRecordName(let field, let reason): return ["field": .string(field), "reason": .string(reason)]
        case .storageFailed(let appId, let reason): return ["appId": .string(appId), "reason": .string(reason)]
        // MARK: Tokens (#14)
        case .duplicateToken(let serial), .tokenNotFound(let serial), .pinRequired(let serial):
            return ["serial": .string(serial)]
        case .tokenExpired(let day): return ["expiryDay": .string(day)]
        case .tokenBoundElsewhere(let reason): return ["reason": .string(reason)]
        case .tokenFormat(let field, let reason): return ["field": .string(field), "reason": .string(reason)]
        case .tokenLimit(let maximum): return ["maximum": .int(maximum)]
        case .tokenKindNotAllowed(let kind): return ["kind": .string(kind)]
        case .notCodeReader(let appId): return ["appId": .string(appId)]
        case .tokensLocked(let state): return ["state": .string(state)]
        // MARK: TPM passcode sealing (#12)
        case .hardwareLockedOut(let delay): return ["retryAfterSeconds": .double(delay)]
        case .hardwareRequired(let reason), .hardwareKeyRejected(let reason), .hardwareUnavailable(let reason),
            .invalidRecoveryKey(let reason):
            return ["reason": .string(reason)]
        // MARK: CT-KIP (#14)
        case .ctkipFailed(let server, let step, let reason):
            return ["server": .string(server), "step": .string(step), "reason": .string(reason)]
        case .ctkipInsecureNotAllowed(let server): return ["server": .string(server)]
        // MARK: Fingerprint unlock (#15)
        case .biometricsPasscodeNeeded(let reason), .biometricsUnavailable(let reason):
            return ["reason": .string(reason)]
        case .biometricsDisabled, .biometricsNotEnabled:
            return [:]
        // MARK: Posture (#16)
        case .postureRefused(let appId, let check, let evidence):
            return [
                "appId": .string(appId), "check": .string(check), "evidence": .string(evidence),
                "reason": .string(EventReason.posture.rawValue),
            ]
        case .invalidNonce(let reason): return ["reason": .string(reason)]
        // MARK: Identity broker (#15)
        case .identityUnknownDomain(let domain): return ["domain": .string(domain)]
        case .identityUnknownProvider(let provider, let known):
            return ["provider": .string(provider), "known": .array(known.map { .string($0) })]
        case .identityNotInAccessGroup(let appId, let domain):
            return ["appId": .string(appId), "domain": .string(domain)]
        case .identityLocked(let state): return ["state": .string(state)]
        case .signInCancelled(let provider, let step), .signInExpired(let provider, let step):
            return ["provider": .string(provider), "step": .string(step)]
        case .signInFailed(let provider, let step, let reason):
            return ["provider": .string(provider), "step": .string(step), "reason": .string(reason)]
        case .sessionExpired(let provider): return ["provider": .string(provider)]
        }
    }

    /// The error as a varlink error reply.
    public var varlinkError: VarlinkError {
        VarlinkError(name: varlinkName, parameters: varlinkParameters)
    }

    /// Decodes a varlink error into a typed error, or `nil` for names Cordon does not define.
    public init?(_ error: VarlinkError) {
        let p = error.parameters
        let string = { (key: String) in p[key]?.stringValue ?? "" }
        switch error.name {
        case "io.cordon.Agent.NotInitialized": self = .notInitialized
        case "io.cordon.Agent.AlreadyInitialized": self = .alreadyInitialized
        case "io.cordon.Agent.WrongPasscode":
            self = .wrongPasscode(
                attemptsLeft: p["attemptsLeft"]?.intValue ?? 0,
                retryAfterSeconds: p["retryAfterSeconds"]?.doubleValue ?? 0)
        case "io.cordon.Agent.RetryLater":
            self = .retryLater(retryAfterSeconds: p["retryAfterSeconds"]?.doubleValue ?? 0)
        case "io.cordon.Agent.PasscodeRequired": self = .passcodeRequired
        case "io.cordon.Agent.InvalidPasscode": self = .invalidPasscode(reason: string("reason"))
        case "io.cordon.Agent.Locked": self = .locked
        case "io.cordon.Agent.Busy": self = .busy
        case "io.cordon.Agent.Revoked": self = .revoked(reason: string("reason"))
        case "io.cordon.Agent.InternalError": self = .internalError(reason: string("reason"))
        case "io.cordon.Agent.TooManyConnections": self = .tooManyConnections(limit: p["limit"]?.intValue ?? 0)
        case "io.cordon.Agent.TooManyProcessConnections":
            self = .tooManyProcessConnections(pid: p["pid"]?.intValue ?? 0, limit: p["limit"]?.intValue ?? 0)
        case "io.cordon.Agent.ConnectionIdle": self = .connectionIdle(seconds: p["seconds"]?.doubleValue ?? 0)
        case "io.cordon.Agent.ForeignSender":
            self = .foreignSender(pid: p["pid"]?.intValue ?? 0, sender: p["sender"]?.intValue ?? 0)
        case "io.cordon.App.NotRegistered": self = .notRegistered
        case "io.cordon.App.AlreadyRegistered": self = .alreadyRegistered(appId: string("appId"))
        case "io.cordon.App.InvalidAppId": self = .invalidAppId(appId: string("appId"), reason: string("reason"))
        case "io.cordon.App.KeyUnavailable": self = .keyUnavailable(state: string("state"))
        case "io.cordon.App.NotManaged": self = .notManaged(appId: string("appId"))
        case "io.cordon.App.SubscriberTooSlow": self = .subscriberTooSlow(limit: p["limit"]?.intValue ?? 0)
        case "io.cordon.App.InvalidToken": self = .invalidToken
        case "io.cordon.App.UnknownSequence": self = .unknownSequence(seq: p["seq"]?.intValue ?? 0)
        case "io.cordon.App.UnknownAction", "io.cordon.Policy.UnknownAction":
            self = .unknownAction(action: string("action"))
        case "io.cordon.App.Refused": self = .refused(appId: string("appId"), reason: string("reason"))
        case "io.cordon.App.UnlockUnavailable": self = .unlockUnavailable(reason: string("reason"))
        case "io.cordon.App.UnlockCancelled": self = .unlockCancelled
        case "io.cordon.App.UnlockTimedOut": self = .unlockTimedOut(seconds: p["seconds"]?.doubleValue ?? 0)
        case "io.cordon.App.Denied":
            let rules = p["rules"]?.arrayValue?.compactMap(\.stringValue) ?? []
            self = .denied(action: string("action"), reason: string("reason"), rules: rules)
        case "io.cordon.App.TargetNotRunning": self = .targetNotRunning(appId: string("appId"))
        case "io.cordon.App.InvalidProcess":
            self = .invalidProcess(pid: p["pid"]?.intValue ?? 0, reason: string("reason"))
        case "io.cordon.App.ProcessChanged":
            self = .processChanged(appId: string("appId"), reason: string("reason"))
        case "io.cordon.App.RegisteredOnBehalf": self = .registeredOnBehalf(appId: string("appId"))
        case "io.cordon.App.ProcessNotHardened": self = .processNotHardened(appId: string("appId"))
        case "io.cordon.App.AppIdInUse": self = .appIdInUse(appId: string("appId"), pid: p["pid"]?.intValue ?? 0)
        case "io.cordon.Pasteboard.Empty": self = .pasteboardEmpty
        case "io.cordon.Pasteboard.ContentTooLarge": self = .contentTooLarge(limit: p["limit"]?.intValue ?? 0)
        // MARK: Storage (#13)
        case "io.cordon.Storage.ContainerLocked":
            self = .containerLocked(appId: string("appId"), state: string("state"))
        case "io.cordon.Storage.NotFound": self = .recordNotFound(namespace: string("namespace"), name: string("name"))
        case "io.cordon.Storage.ValueTooLarge":
            self = .valueTooLarge(size: p["size"]?.intValue ?? 0, limit: p["limit"]?.intValue ?? 0)
        case "io.cordon.Storage.InvalidName":
            self = .invalidRecordName(field: string("field"), reason: string("reason"))
        case "io.cordon.Storage.Tampered": self = .recordTampered(namespace: string("namespace"), name: string("name"))
        case "io.cordon.Storage.StorageFailed":
            self = .storageFailed(appId: string("appId"), reason: string("reason"))
        // MARK: Tokens (#14)
        case "io.cordon.Tokens.DuplicateToken": self = .duplicateToken(serial: string("serial"))
        case "io.cordon.Tokens.TokenNotFound": self = .tokenNotFound(serial: string("serial"))
        case "io.cordon.Tokens.TokenExpired": self = .tokenExpired(expiryDay: string("expiryDay"))
        case "io.cordon.Tokens.TokenBoundElsewhere": self = .tokenBoundElsewhere(reason: string("reason"))
        case "io.cordon.Tokens.TokenFormat": self = .tokenFormat(field: string("field"), reason: string("reason"))
        case "io.cordon.Tokens.TokenLimit": self = .tokenLimit(maximum: p["maximum"]?.intValue ?? 0)
        case "io.cordon.Tokens.PinRequired": self = .pinRequired(serial: string("serial"))
        case "io.cordon.Tokens.KindNotAllowed": self = .tokenKindNotAllowed(kind: string("kind"))
        case "io.cordon.Tokens.NotCodeReader": self = .notCodeReader(appId: string("appId"))
        case "io.cordon.Tokens.Locked": self = .tokensLocked(state: string("state"))
        // MARK: TPM passcode sealing (#12)
        case "io.cordon.Agent.HardwareRequired": self = .hardwareRequired(reason: string("reason"))
        case "io.cordon.Agent.HardwareLockedOut":
            self = .hardwareLockedOut(retryAfterSeconds: p["retryAfterSeconds"]?.doubleValue ?? 0)
        case "io.cordon.Agent.HardwareKeyRejected": self = .hardwareKeyRejected(reason: string("reason"))
        case "io.cordon.Agent.HardwareUnavailable": self = .hardwareUnavailable(reason: string("reason"))
        case "io.cordon.Agent.InvalidRecoveryKey": self = .invalidRecoveryKey(reason: string("reason"))
        // MARK: CT-KIP (#14)
        case "io.cordon.Tokens.CTKIPFailed":
            self = .ctkipFailed(server: string("server"), step: string("step"), reason: string("reason"))
        case "io.cordon.Tokens.CTKIPInsecureNotAllowed": self = .ctkipInsecureNotAllowed(server: string("server"))
        // MARK: Fingerprint unlock (#15)
        case "io.cordon.Agent.BiometricsDisabled": self = .biometricsDisabled
        case "io.cordon.Agent.BiometricsNotEnabled": self = .biometricsNotEnabled
        case "io.cordon.Agent.BiometricsPasscodeNeeded": self = .biometricsPasscodeNeeded(reason: string("reason"))
        case "io.cordon.Agent.BiometricsUnavailable": self = .biometricsUnavailable(reason: string("reason"))
        // MARK: Posture (#16)
        case "io.cordon.App.PostureRefused":
            self = .postureRefused(appId: string("appId"), check: string("check"), evidence: string("evidence"))
        case "io.cordon.Posture.InvalidNonce": self = .invalidNonce(reason: string("reason"))
        // MARK: Identity broker (#15)
        case "io.cordon.Identity.UnknownDomain": self = .identityUnknownDomain(domain: string("domain"))
        case "io.cordon.Identity.UnknownProvider":
            let known = p["known"]?.arrayValue?.compactMap(\.stringValue) ?? []
            self = .identityUnknownProvider(provider: string("provider"), known: known)
        case "io.cordon.Identity.NotInAccessGroup":
            self = .identityNotInAccessGroup(appId: string("appId"), domain: string("domain"))
        case "io.cordon.Identity.Locked": self = .identityLocked(state: string("state"))
        case "io.cordon.Identity.SignInCancelled":
            self = .signInCancelled(provider: string("provider"), step: string("step"))
        case "io.cordon.Identity.SignInExpired":
            self = .signInExpired(provider: string("provider"), step: string("step"))
        case "io.cordon.Identity.SignInFailed":
            self = .signInFailed(provider: string("provider"), step: string("step"), reason: string("reason"))
        case "io.cordon.Identity.SessionExpired": self = .sessionExpired(provider: string("provider"))
        default: return nil
        }
    }
}
