/// Every error the agent returns, with a stable varlink name and typed parameters.
///
/// The server throws these, the wire carries them as varlink errors, and CordonKit decodes
/// them back, so a name maps one-to-one across the three. Each case is declared once more, as
/// data, in ``ErrorDeclarations``: its name, parameters, IDL comment and CLI message.
public enum CordonError: Error, Sendable, Equatable {
    /// No passcode has been set yet: run `Initialize` first.
    case notInitialized
    /// `Initialize` was called but a passcode is already set.
    case alreadyInitialized
    /// The passcode was wrong; `attemptsLeft` before the tighter limit: the max-attempts action's or,
    /// when a TPM allows fewer wrong passcodes, its lockout's (then `hardwareAttemptsLeft` is that
    /// figure and `maxAttemptsLeft` the max-attempts action's). `maxAttemptsAction` (`wipe`,
    /// `lockout`) is set when no attempt is left and the action was applied: `wipe` means the
    /// container was erased by this attempt.
    case wrongPasscode(
        attemptsLeft: Int, retryAfterSeconds: Double, maxAttemptsLeft: Int? = nil, hardwareAttemptsLeft: Int? = nil,
        maxAttemptsAction: String? = nil)
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
    /// The import would take the tokens past `tokens.maxTokens`; none of its tokens was stored.
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
    /// The database's security state does not match the TPM's counter that anchors it: a copy from
    /// before a wipe, an HOTP code, a failed attempt or a policy update was put back, or a row was
    /// edited (docs/THREAT-MODEL.md, "State the user cannot roll back"). Nothing opens; only a full
    /// wipe (`cordon wipe --yes`) starts again.
    case stateRolledBack(reason: String)
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
    // MARK: Pinned channel (#32)
    /// The policy's `network.clientCertificate` cannot be used: `parameter` (its certificate or
    /// key) names `path`, and `reason` says what is wrong (missing, unreadable, not a certificate
    /// or key, the key not the certificate's).
    case invalidClientCertificate(parameter: String, path: String, reason: String)
}
