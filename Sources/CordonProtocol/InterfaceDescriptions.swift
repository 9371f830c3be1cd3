/// The varlink interface definitions (IDL) the agent serves through
/// `org.varlink.service.GetInterfaceDescription`.
public enum InterfaceDescriptions {
    /// The protocol version string reported by `GetInfo`.
    public static let version = "0.1.0"

    /// Every interface the agent implements, by name.
    public static let all: [String: String] = [
        "org.varlink.service": service,
        "io.cordon.Agent": agent,
        "io.cordon.App": app,
        "io.cordon.Policy": policy,
        "io.cordon.Audit": audit,
        "io.cordon.Pasteboard": pasteboard,
        "io.cordon.Posture": posture,
        "io.cordon.Storage": storage,
        "io.cordon.Tokens": tokens,
        "io.cordon.Identity": identity,
    ]

    /// Interface names in the order `GetInfo` lists them.
    public static let names = [
        "org.varlink.service", "io.cordon.Agent", "io.cordon.App", "io.cordon.Pasteboard", "io.cordon.Policy",
        "io.cordon.Audit", "io.cordon.Posture", "io.cordon.Storage",
        "io.cordon.Tokens", "io.cordon.Identity",
    ]

    /// `org.varlink.service`, as defined by the varlink specification.
    public static let service = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """

    /// `io.cordon.Agent`: the user's container: passcode, lock and key lifecycle.
    public static let agent = """
        # The Cordon agent: one user's container, its passcode, lock state and key.
        interface io.cordon.Agent

        # The lifecycle state of the container.
        type State (uninitialized, lockedNoKey, unlocked, lockedKeyHeld)

        # Whether an app has done what the last event asked of it.
        type Compliance (compliant, pending, overdue, unmanaged, frozen, terminated)

        # How an app is frozen: its own cgroup (cgroup.freeze), or SIGSTOP to its process group.
        type FreezeMethod (cgroup, signals)

        # An app's process as the agent read it: stopped (SIGSTOP), frozen (its cgroup), freezing.
        type ProcessState (running, stopped, frozen, freezing, exited)

        # The agent's status.
        type Status (
          state: State,
          seq: int,
          failedAttempts: int,
          maxAttempts: int,
          retryAfterSeconds: float,
          idleTimeoutSeconds: int,
          reauthGraceSeconds: int,
          ackDeadlineMs: int,
          apps: int,
          version: string,
          insecureKDF: bool,
          lockTriggers: ?[]string,
          auditProblem: ?AuditProblem,
          testMode: ?bool,
          keyProtection: ?KeyProtection,
          onMaxAttempts: ?string,
          fleet: ?Fleet
        )

        # The fleet directory cordon-fleetd hands verified commands through, while it exists: the
        # device id and freshness status.json gives, conditions.policyStale in force, and the last
        # command this container executed or refused.
        type Fleet (
          device: ?string,
          verifiedAt: ?float,
          staleAfter: ?float,
          stale: bool,
          policyStale: string,
          lastCommand: ?string,
          lastCommandAt: ?float,
          problem: ?string
        )

        # What protects the master key: software, tpm or tpm+pcrs; the TPM's dictionary-attack
        # state (read from the TPM) when one seals it; a warning when the policy's wish is not met;
        # the TPM counter the security state is anchored to, when one is.
        type KeyProtection (
          kind: string,
          pcrs: ?[]int,
          attemptsLeft: ?int,
          maxFailures: ?int,
          inLockout: ?bool,
          retryAfterSeconds: ?float,
          problem: ?string,
          warning: ?string,
          stateAnchor: ?string
        )

        # Audit records that could not be stored (they are in the agent's log only).
        type AuditProblem (
          since: float,
          unstored: int,
          error: string
        )

        # A registered app.
        type App (
          appId: string,
          pid: int,
          executable: string,
          managed: bool,
          subscribed: bool,
          compliance: Compliance,
          pendingSeq: ?int,
          lastAckSeq: ?int,
          freezeMethod: ?FreezeMethod,
          processState: ?ProcessState,
          cgroup: ?string,
          resumesUndone: ?int
        )

        # The current state, attempt counter and settings.
        method GetStatus() -> (status: Status)

        # Sets the first passcode and creates the master key; the container stays locked. The reply holds
        # the recovery key (48 digits in 8 groups of 6), given only here.
        method Initialize(passcode: string) -> (recoveryKey: ?string)

        # Unlocks; the passcode may be omitted within the re-authentication grace.
        method Unlock(passcode: ?string) -> ()

        # Locks; the key stays in memory unless the settings discard it.
        method Lock() -> ()

        # Revokes: locks, zeroes every key and tells every app.
        method Logout() -> ()

        # Re-wraps the master key under a new passcode.
        method ChangePasscode(old: string, new: string) -> ()

        # Crypto-erases the container (needs it unlocked and confirm = true).
        method Wipe(confirm: bool, passcode: ?string) -> ()

        # The registered apps and their compliance.
        method ListApps() -> (apps: []App)

        # Restores with the recovery key (a TPM cleared or replaced, the database on another machine): sets
        # a new passcode, re-seals, and returns a new recovery key; the one given stops working.
        method Recover(recoveryKey: string, passcode: string) -> (recoveryKey: string)

        # Unlocks with a fingerprint through fprintd (passcode.biometrics: allowed, the user opted in, a
        # passcode unlock since the agent started and the last logout, within 48 hours). A finger that does not match
        # answers WrongPasscode and counts as a failed attempt.
        method UnlockWithFingerprint() -> ()

        # Opts into (enabled: true, with the passcode; the container unlocked) or out of fingerprint unlock.
        method SetBiometrics(enabled: bool, passcode: ?string) -> ()

        """ + ErrorDeclarations.idl(for: "io.cordon.Agent")

    /// `io.cordon.App`: what wrapped apps call.
    public static let app = """
        # What wrapped apps call: registration, events, acknowledgements and their key.
        interface io.cordon.App

        type State (uninitialized, lockedNoKey, unlocked, lockedKeyHeld)

        type Kind (
          State,
          EncryptionKeyAvailable,
          EncryptionKeyUnavailable,
          DidLock,
          DidUnlock,
          Wiped,
          PolicyDidChange,
          AppEnforced,
          OpenDocument,
          PostureWarning,
          DidSignOut
        )

        # What the agent did to an app that missed its acknowledgement deadline (or thaw).
        type Enforcement (freeze, terminate, disconnect, report, thaw)

        # A document handed to this app by another (OpenDocument).
        # id: fetch the file with OpenDocument(id), an open descriptor (path is informative only).
        type Document (path: string, contentType: ?string, sender: string, id: ?string)

        type Reason (
          userRequest,
          idleTimeout,
          screenLock,
          suspend,
          logout,
          maxAttempts,
          policy,
          wipe,
          shutdown,
          startup,
          posture,
          agentUnavailable
        )

        # One event; the first reply of Subscribe is a State snapshot.
        type Event (
          seq: int,
          kind: Kind,
          reason: Reason,
          time: float,
          state: State,
          ackDeadline: ?float,
          policyVersion: ?string,
          appId: ?string,
          pid: ?int,
          enforcement: ?Enforcement,
          document: ?Document,
          posture: ?[]PostureResult,
          provider: ?string
        )

        # A device posture check (io.cordon.Posture) that caused a PostureWarning or a revocation.
        type PostureResult (check: string, status: (pass, fail, unknown), evidence: string)

        # A policy decision; truncateTo is an obligation (cut the content to that many characters).
        type Decision (
          allowed: bool,
          action: string,
          reason: string,
          truncateTo: ?int,
          rules: []string
        )

        # Registers this connection as the app; the token binds a subscription to it. With pid,
        # registers on behalf of a child process of the caller (cordon run): that process is
        # checked against the policy and is the one enforcement acts on.
        method Register(appId: string, pid: ?int) -> (appId: string, managed: bool, token: string)

        # Streams events (call with more): the current state first, then every change.
        method Subscribe(token: ?string) -> (event: Event)

        # Says the app handled the event with this seq (halted: I/O stopped, key dropped).
        method Acknowledge(seq: int, status: (halted, handled)) -> ()

        # The app's own 256-bit key (base64) while the key is available.
        method GetKey() -> (key: string)

        # Resets the idle timer.
        method ReportActivity() -> ()

        # Implicit unlock: within the grace unlocks at once; otherwise prompts the user through
        # pinentry and returns once the container is unlocked (by the prompt or otherwise), the
        # user cancels, or timeoutSeconds (default 120) pass.
        method RequestUnlock(appId: ?string, timeoutSeconds: ?int, token: ?string) -> (state: State, prompted: bool)

        # Hands the file at path to the running app target (document.send for this app,
        # document.receive for the target); the target gets an OpenDocument event.
        method ShareDocument(path: string, contentType: ?string, target: string) -> ()

        # The document an OpenDocument event announced, as an open read-only descriptor: the
        # reply message is sent with one descriptor attached (SCM_RIGHTS). Call it on a
        # connection of its own; token names the registration when that is another connection.
        method OpenDocument(id: string, token: ?string) -> (document: Document)

        # Asks the policy: pasteboard.copy, pasteboard.paste, document.send, document.receive or
        # document.save; target is the other app's id (or the path for a save); context may hold
        # contentType and length.
        method Check(action: string, target: ?string, context: ?[string]string) -> (decision: Decision)

        # One network.pins entry: a host must satisfy every entry of its most specific matching
        # pattern (an exact host beats a wildcard, a longer wildcard suffix a shorter one): a
        # certificate of the verified chain with one of pinSha256 (RFC 7469), or a chain up to one
        # of caCertificates (PEM). source is the entry's file and JSON pointer.
        type Pin (hosts: []string, pinSha256: []string, caCertificates: []string, source: string)

        # The absolute paths of the PEM certificate chain and private key for mutual TLS.
        type ClientCertificate (certificate: string, key: string)

        # The app's effective network policy; unpinnedHosts (deny or systemTrust) governs hosts no
        # pattern names, unpinnedHostsSource names where it comes from; onLock (keep, refuseNew or
        # cut; absent: refuseNew) is what a lock does to the channel while the key is held.
        type NetworkPolicy (
          pins: []Pin,
          unpinnedHosts: string,
          unpinnedHostsSource: string,
          clientCertificate: ?ClientCertificate,
          onLock: ?string
        )

        # The registered app's effective network policy (after a reload, the new one); token names
        # the registration when called on another connection of the registered process.
        method GetNetworkPolicy(token: ?string) -> (policy: NetworkPolicy)

        # A connection of the app's pinned channel that a new policy cut: the server's host and
        # why the new policy refuses it.
        type ChannelCut (host: string, reason: string)

        # Reports the connections a policy change cut (1 to 256; a host of at most 253 characters,
        # a reason of at most 1024 bytes), each written to the audit log as network.cut for the
        # registered app; answered once they are stored. token names the registration when called
        # on another connection of the registered process.
        method ReportChannelCuts(cuts: []ChannelCut, token: ?string) -> ()

        """ + ErrorDeclarations.idl(for: "io.cordon.App")

    /// `io.cordon.Pasteboard`: the managed pasteboard.
    public static let pasteboard = """
        # The managed pasteboard: content lives only in the agent's memory, encrypted under a
        # per-session key; pasting follows the policy's copyOut level and character limit.
        interface io.cordon.Pasteboard

        type Decision (allowed: bool, action: string, reason: string, truncateTo: ?int, rules: []string)

        # Copies content (pasteboard.copy); truncatedTo is set when the policy cut it.
        method Copy(content: string, mimeType: ?string) -> (truncatedTo: ?int, decision: Decision)

        # Pastes (pasteboard.paste, with the copying app as the source); io.cordon.App.Denied when
        # the policy refuses.
        method Paste() -> (
          content: string,
          mimeType: string,
          source: string,
          truncatedTo: ?int,
          decision: Decision
        )

        # Empties the pasteboard.
        method Clear() -> ()

        """ + ErrorDeclarations.idl(for: "io.cordon.Pasteboard")

    /// `io.cordon.Policy`: the effective policy, validation, explanation and reload.
    public static let policy = """
        # The policy in force: what it says, where each value came from, and why a decision fell.
        interface io.cordon.Policy

        type Setting (path: string, value: string, rules: []string, json: ?string)

        type Problem (path: string, pointer: string, line: ?int, column: ?int, message: string)

        type Decision (allowed: bool, action: string, reason: string, truncateTo: ?int, rules: []string)

        type Candidate (rule: string, value: string, won: bool)

        type Step (setting: string, value: string, candidates: []Candidate)

        type Source (path: string, origin: string, status: string, problems: []string, signedBy: ?string)

        type Status (
          version: string,
          appliedAt: float,
          sources: []Source,
          adminDirectory: string,
          userDirectory: string,
          trustDirectory: string,
          trustedKeys: int
        )

        # Every setting of the effective policy with its provenance.
        method GetEffective() -> (version: string, settings: []Setting)

        # Validates a document (as an admin file, or as a user file with user = true).
        method Validate(document: string, path: ?string, user: ?bool) -> (valid: bool, problems: []Problem)

        # The decision for an app and the chain of settings and files behind it.
        method Explain(
          appId: string,
          action: string,
          target: ?string,
          context: ?[string]string
        ) -> (decision: Decision, steps: []Step)

        # Re-reads every policy directory now.
        method Reload() -> (status: Status)

        # Sources, rejected files and the version in force.
        method GetStatus() -> (status: Status)

        """ + ErrorDeclarations.idl(for: "io.cordon.Policy")

    /// `io.cordon.Audit`: the audit log.
    public static let audit = """
        # The audit log: decisions, enforcement and policy changes.
        interface io.cordon.Audit

        type Record (
          id: int,
          time: float,
          category: string,
          appId: ?string,
          action: ?string,
          outcome: string,
          reason: string,
          rules: []string,
          testMode: ?bool
        )

        # Records, oldest first (at most limit, the newest ones).
        method Query(since: ?float, appId: ?string, limit: ?int) -> (records: []Record)

        # Streams matching records as they are written (call with more).
        method Follow(since: ?float, appId: ?string, limit: ?int) -> (record: Record)

        """

    /// `io.cordon.Storage`: each app's encrypted key-value records (docs/PROTOCOL.md).
    public static let storage = """
        # Each managed app's encrypted key-value records, in a SQLite file of its own, sealed with
        # AES-256-GCM under a key derived from the app key. A call reaches the records of the
        # caller's verified managed registration only; with appId and passcode, an administrator's
        # call for that app (the passcode is checked and counted like Unlock's; audited).
        # Values are base64, at most 32768 bytes decoded; namespaces and names 1 to 1024 bytes of
        # UTF-8 without NUL; namespace defaults to "default".
        interface io.cordon.Storage

        type AppUsage (appId: string, records: int, bytes: int)

        # Stores value under name, replacing what was there; answered once it is on disk.
        method Put(
          namespace: ?string,
          name: string,
          value: string,
          appId: ?string,
          passcode: ?string
        ) -> ()

        # The value stored under name; NotFound when there is none.
        method Get(namespace: ?string, name: string, appId: ?string, passcode: ?string) -> (value: string)

        # Deletes name; deleted says whether it was there.
        method Delete(namespace: ?string, name: string, appId: ?string, passcode: ?string) -> (deleted: bool)

        # The names in namespace starting with prefix, sorted.
        method List(namespace: ?string, prefix: ?string, appId: ?string, passcode: ?string) -> (names: []string)

        # Records and bytes per app (no record is read).
        method Usage() -> (apps: []AppUsage)

        # Crypto-erases one app: its random key is destroyed (its next key is a new one), its
        # storage file deleted, the app told with Wiped (appId set). Needs the passcode.
        method WipeApp(appId: string, passcode: string) -> ()

        # The app's age identity (AGE-SECRET-KEY-1…, derived from its current key) and its recipient
        # (age1…), so that the real age CLI can decrypt the app's SecureFile files. Needs the passcode;
        # audited.
        method ExportIdentity(appId: string, passcode: string) -> (identity: string, recipient: string)

        """ + ErrorDeclarations.idl(for: "io.cordon.Storage")
}
