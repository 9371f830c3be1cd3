import CordonKit
import CordonProtocol
import Foundation

/// One line of `cordon doctor`.
struct DoctorCheck: Equatable {
    enum Outcome: String {
        case ok
        case warn
        case fail = "FAIL"
    }

    var outcome: Outcome
    var text: String
    var hint: String?

    /// `ok    text`, or `FAIL  text; hint: …`.
    var line: String {
        let label = outcome.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
        guard let hint else { return label + text }
        return label + text + "; hint: " + hint
    }

    /// How to start the agent.
    static let startHint = "start cordond (`systemctl --user start cordond`, or run `cordond`)"

    /// The socket's directory exists, is a directory, has mode 0700 and belongs to `uid`.
    static func runtimeDirectory(_ path: String, uid: uid_t) -> DoctorCheck {
        let subject = "runtime directory \(path)"
        var info = stat()
        guard stat(path, &info) == 0 else {
            return DoctorCheck(
                outcome: .fail, text: "\(subject): \(String(cString: strerror(errno)))",
                hint: "check $XDG_RUNTIME_DIR and --socket; cordond creates the directory when it starts")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return DoctorCheck(
                outcome: .fail, text: "\(subject) is not a directory", hint: "remove it, then " + startHint)
        }
        let mode = info.st_mode & 0o7777
        if info.st_uid != uid {
            return DoctorCheck(
                outcome: .fail, text: "\(subject) belongs to uid \(info.st_uid), not to you (uid \(uid))",
                hint: "use a runtime directory of your own (check $XDG_RUNTIME_DIR)")
        }
        if mode != 0o700 {
            return DoctorCheck(
                outcome: .fail, text: "\(subject) has mode \(octal(mode)), expected 0700",
                hint: "run `chmod 700 \(path)`")
        }
        return DoctorCheck(outcome: .ok, text: "\(subject) exists, mode 0700, owned by you")
    }

    /// The socket exists, is a socket and has mode 0600.
    static func socket(_ path: String) -> DoctorCheck {
        let subject = "socket \(path)"
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return DoctorCheck(
                outcome: .fail, text: "\(subject): \(String(cString: strerror(errno)))", hint: startHint)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            return DoctorCheck(
                outcome: .fail, text: "\(subject) is not a socket", hint: "remove it, then " + startHint)
        }
        let mode = info.st_mode & 0o7777
        guard mode == 0o600 else {
            return DoctorCheck(
                outcome: .fail, text: "\(subject) has mode \(octal(mode)), expected 0600",
                hint: "restart cordond (it creates the socket with mode 0600)")
        }
        return DoctorCheck(outcome: .ok, text: "\(subject) is a socket, mode 0600")
    }

    /// The agent answered `status()`.
    static func agent(_ answer: Result<AgentStatus, CLIError>) -> DoctorCheck {
        switch answer {
        case .success(let status):
            return DoctorCheck(
                outcome: .ok,
                text: "cordond answers: the container is \(status.state.userName), version \(status.version)")
        case .failure(let error):
            return DoctorCheck(outcome: .fail, text: error.message, hint: error.hint)
        }
    }

    /// libsystemd can be loaded.
    static func libsystemd() -> DoctorCheck {
        guard let handle = dlopen("libsystemd.so.0", RTLD_LAZY) else {
            return DoctorCheck(
                outcome: .fail, text: "libsystemd.so.0 cannot be loaded",
                hint: "install libsystemd (`apt install libsystemd0`)")
        }
        dlclose(handle)
        return DoctorCheck(outcome: .ok, text: "libsystemd.so.0 is present")
    }

    /// Warns when the agent runs in test mode (docs/THREAT-MODEL.md, "Admin policy").
    static func testMode(_ status: AgentStatus) -> DoctorCheck {
        guard status.testMode == true else {
            return DoctorCheck(outcome: .ok, text: "admin inputs come from root's configuration only")
        }
        return DoctorCheck(
            outcome: .warn,
            text: "cordond runs in TEST MODE: admin inputs (policy and trust directories, lifecycle values) come from "
                + "flags and environment the user controls",
            hint: "for tests only; restart cordond without --test-mode and CORDON_TEST_MODE")
    }

    /// Warns when the agent uses the insecure test KDF.
    static func kdf(_ status: AgentStatus) -> DoctorCheck {
        guard status.insecureKDF else {
            return DoctorCheck(outcome: .ok, text: "the passcode KDF is scrypt, tuned")
        }
        return DoctorCheck(
            outcome: .warn, text: "cordond runs with the INSECURE fast KDF: passcodes are trivial to brute-force",
            hint: "for tests only; restart cordond without --insecure-fast-kdf and CORDON_INSECURE_FAST_KDF")
    }

    /// Which protection is in force and the TPM's lockout state; nil before initialisation.
    static func keyProtection(_ status: AgentStatus) -> DoctorCheck? {
        guard let protection = status.keyProtection else { return nil }
        // The state anchor is a check of its own (`stateAnchor`).
        let rows = StatusCommand.protectionRows(protection).filter { $0[0] != "state anchor:" }.map { $0[1] }
        let text = "key protection: " + rows.joined(separator: "; ")
        if let warning = protection.warning {
            return DoctorCheck(
                outcome: .warn, text: text + " (\(warning))",
                hint:
                    "a TPM 2.0 limits passcode guesses; enable it in the firmware and give the user access to /dev/tpmrm0 (group tss), then `cordon passwd` re-seals"
            )
        }
        if protection.kind == "software" {
            return DoctorCheck(
                outcome: .warn, text: text,
                hint: "passcode.hardware is off: a copy of the database can be attacked offline")
        }
        if protection.problem != nil || protection.inLockout == true {
            return DoctorCheck(
                outcome: .fail, text: text,
                hint: protection.inLockout == true
                    ? "wait for the TPM to recover"
                    : protection.problem?.contains("StateRolledBack") == true
                        ? "put back the database cordond last wrote, or erase everything with `cordon wipe --yes` and `cordon init`"
                        : "check the TPM, or restore with `cordon init --recovery`")
        }
        return DoctorCheck(outcome: .ok, text: text)
    }

    /// Whether a TPM counter anchors the security state (docs/THREAT-MODEL.md, "State the user cannot
    /// roll back"); nil before initialisation and while the state is refused (the key protection
    /// check fails then).
    static func stateAnchor(_ status: AgentStatus) -> DoctorCheck? {
        guard let protection = status.keyProtection, protection.problem == nil else { return nil }
        if let anchor = protection.stateAnchor {
            return DoctorCheck(
                outcome: .ok,
                text: "security state anchored to the \(anchor): a restored or edited database is refused")
        }
        return DoctorCheck(
            outcome: .warn,
            text: "no TPM anchors the security state: \(Self.unanchoredLimits)",
            hint:
                "with a TPM 2.0 the user can reach and passcode.hardware not off, the next unlock anchors it (docs/THREAT-MODEL.md)"
        )
    }

    /// What anyone running as the user can undo when no TPM anchors the state.
    static let unanchoredLimits =
        "the user (or a program running as them) can undo a full wipe by putting back a copy of the data "
        + "directory, get an HOTP code again, regain failed passcode attempts and bring back an older signed "
        + "policy by editing the database"

    /// Fails while the agent cannot store audit records.
    static func audit(_ status: AgentStatus) -> DoctorCheck {
        guard let problem = status.auditProblem else {
            return DoctorCheck(outcome: .ok, text: "the audit log is stored")
        }
        return DoctorCheck(
            outcome: .fail, text: "audit log: " + StatusCommand.auditDescription(problem),
            hint: "free space where cordond keeps its data; the records are in cordond's log "
                + "(journalctl --user -u cordond)")
    }

    /// The fleet (docs/ARCHITECTURE.md, "Fleet commands in the agent"), when cordon-fleetd's
    /// directory exists: fails while the policy is stale and `conditions.policyStale` acts on it,
    /// warns while it is stale otherwise or the directory cannot be read.
    static func fleet(_ status: AgentStatus) -> DoctorCheck? {
        guard let fleet = status.fleet else { return nil }
        let text = "fleet: " + StatusCommand.fleetDescription(fleet)
        let hint = "check cordon-fleetd (`systemctl status cordon-fleetd`) and that the repository is reachable"
        if fleet.stale {
            return DoctorCheck(outcome: fleet.policyStale == "off" ? .warn : .fail, text: text, hint: hint)
        }
        if fleet.problem != nil { return DoctorCheck(outcome: .warn, text: text, hint: hint) }
        return DoctorCheck(outcome: .ok, text: text)
    }

    /// Which apps get keys (docs/THREAT-MODEL.md, "App identity"): warns when no app is bound (no
    /// app gets a key) and when unbound apps are trusted (any same-user program can claim one).
    static func appTrust(_ settings: [WireSetting]) -> DoctorCheck {
        let unknown = settings.first { $0.path == "/apps/unknown" }?.json ?? "\"unmanaged\""
        let bound = settings.filter { $0.path.hasPrefix("/apps/managed/") }.count
        if unknown == "\"trusted\"" {
            return DoctorCheck(
                outcome: .warn,
                text: "apps.unknown is trusted: any program of this user can claim an unbound app id and get its key",
                hint:
                    "bind your apps to their executables in an admin policy (apps.managed) and drop apps.unknown: trusted"
            )
        }
        guard bound > 0 else {
            return DoctorCheck(
                outcome: .warn, text: "no app is bound (apps.managed is empty): no app gets a key",
                hint: "bind your apps in /etc/cordon/policy.d (apps.managed), or set apps.unknown: trusted where "
                    + "every program the user runs is trusted")
        }
        return DoctorCheck(
            outcome: .ok,
            text: "apps: \(bound) bound; unbound apps are \(unknown.replacingOccurrences(of: "\"", with: ""))")
    }

    /// Warns when the agent runs without D-Bus lock triggers; nil for agents that predate them.
    static func lockTriggers(_ status: AgentStatus) -> DoctorCheck? {
        guard let triggers = status.lockTriggers else { return nil }
        guard triggers.isEmpty else {
            return DoctorCheck(outcome: .ok, text: "lock triggers: \(triggers.joined(separator: ", "))")
        }
        return DoctorCheck(
            outcome: .warn, text: "no lock triggers: screen lock, suspend and idle hints do not lock the container",
            hint: "cordond could not reach D-Bus (system bus for logind, session bus for the screen saver)")
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }
}
