import CordonIdentity
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import CordonSystem
import CordonTPM
import Foundation

/// Everything the agent is started with.
public struct AgentConfiguration: Sendable {
    public var paths: CordonPaths
    /// Test mode: the lock and passcode settings cordond's flags give (`--idle-timeout`, …), as the
    /// policy document they are: laid over the built-in default, beneath every policy file
    /// (``defaultPolicy``). Empty outside test mode.
    public var settingsOverlay: PolicySettingValues
    /// The back-off between failed attempts (not a policy setting).
    public var backoff: Backoff
    public var limits: ConnectionLimits
    /// INSECURE: use near-free KDF parameters. For tests only; logged loudly.
    public var insecureFastKDF: Bool
    /// How long one passcode derivation should take when tuning scrypt.
    public var kdfTargetSeconds: Double
    /// The uid allowed to connect (the agent's own).
    public var allowedUID: UInt32
    /// Admin, user and trust directories; nil runs on the built-in default only.
    public var policyDirectories: PolicyDirectories?
    /// Audit allowed decisions too (denies are always audited).
    public var auditAllows: Bool
    /// How much audit history is kept.
    public var auditRetention: AuditRetention
    /// Where the D-Bus lock triggers connect; nil runs without them.
    public var lockTriggers: LockTriggerAddresses?
    /// The program `RequestUnlock` runs to ask the user (`cordon`, with `unlock --pinentry-only`).
    public var promptProgram: String
    /// Whether the built-in default trusts unbound apps (`apps.unknown: trusted`), for code that
    /// embeds the agent and its tests; cordond never sets it (an admin file says so instead).
    public var trustUnboundApps = false
    /// Test mode: cordond took admin inputs (policy and trust directories, lifecycle values, the
    /// fast KDF) from flags or environment. Logged at start, shown in `status` and `doctor`, and
    /// marked on every audit record (docs/THREAT-MODEL.md, "Admin policy").
    public var testMode = false
    /// The Flatpak installations an administrator owns: a sandboxed app's code must come from one
    /// of them for a `flatpak` binding to match (docs/THREAT-MODEL.md, "Sandboxed apps").
    public var flatpakInstallations = [FlatpakSandbox.systemInstallation]
    /// Whether the stronger default passcode rules apply where no TPM protects the key
    /// (`KeyVault+PasscodeRules.swift`); cordond always applies them, code embedding the agent may not
    /// (its tests' short passcodes).
    public var softwareOnlyPasscodeDefaults = true
    /// The admin settings file naming the pinentry `RequestUnlock`'s prompt runs (`"pinentry"`);
    /// trusted only when root's (see `PromptPinentry`).
    public var adminSettingsPath: String
    /// The admin settings as cordond opened them at start when named (`AdminPath`): read through
    /// this descriptor, never by the name again (docs/THREAT-MODEL.md, "Admin policy").
    public var openedAdminSettings: AdminPath?
    /// Every admin path cordond opened at start, held open for as long as the agent runs (a
    /// Flatpak installation is reached as `/proc/self/fd/N` of its descriptor).
    public var openedAdminPaths: [AdminPath] = []
    /// The prompt program as cordond opened it at start when named (`--prompt-program`): run
    /// through this descriptor (`PromptProcess`).
    public var openedPromptProgram: AdminPath?
    /// The TCTI configuration of the TPM that seals the key (docs/THREAT-MODEL.md, "Passcode and
    /// TPM"): the kernel's resource manager unless test mode names a simulator.
    public var tpmTCTI = TPMConnection.defaultTCTI
    /// CT-KIP: a PEM file of CA certificates servers are validated against instead of the system
    /// trust store (test mode only; docs/THREAT-MODEL.md, "Tokens").
    public var ctkipCAFile: String?
    /// Posture: the root the checks read under (`/`; a fixture tree in tests, test mode only;
    /// docs/ARCHITECTURE.md, "Posture").
    public var postureRoot = "/"
    /// The agent's metrics (`--metrics-file` writes them; docs/ARCHITECTURE.md, "Metrics"): one set
    /// per agent, shared with the writer.
    public var metrics = AgentMetrics()
    /// Posture: seconds between readings while an app is registered (the conditions are applied
    /// after each; also on resume from suspend and on a policy change).
    public var postureInterval: Double = 300
    /// The program the loopback sign-in opens the authorization URL with, and its first arguments
    /// (the URL is appended): `xdg-open` unless test mode names a browser stand-in
    /// (docs/ARCHITECTURE.md, "Identity").
    public var identityBrowser = ["xdg-open"]
    /// Test mode: the wait between device-grant polls instead of the provider's `interval`, so a
    /// test's sign-in is not held for seconds per poll; nil (always outside tests) keeps the
    /// provider's interval (RFC 8628 §3.5).
    public var identityPollDelay: Double?
    /// The wait after a failed renewal of a provider's sessions before the next is tried
    /// (docs/components/identity.md, "Background renewal and backoff").
    public var identityRenewalBackoff = RenewalBackoff()
    /// Uniform random numbers in [0, 1) that jitter ``identityRenewalBackoff``: the system's
    /// generator unless a test injects its own.
    public var identityJitter: @Sendable () -> Double = { Double.random(in: 0..<1) }
    /// cordon-fleetd's directory (`--fleet-dir`; docs/ARCHITECTURE.md, "Fleet commands in the
    /// agent"); nil runs without a fleet. A directory that does not exist means no fleet until it does.
    public var fleetDirectory: String?
    /// The fleet directory as cordond opened it at start (`AdminPath`), outside test mode.
    public var openedFleetDirectory: AdminPath?
    /// Test mode only (`CORDON_TEST_FLEET_CRASH`): where executing a fleet command exits as killed.
    public var fleetCrashPoint: FleetCrashPoint?

    /// Where the admin settings are unless configured otherwise.
    public static let defaultAdminSettingsPath = "/etc/cordon/settings.json"

    public init(
        paths: CordonPaths, settingsOverlay: PolicySettingValues = PolicySettingValues(),
        backoff: Backoff = Backoff(), limits: ConnectionLimits = .standard, insecureFastKDF: Bool = false,
        kdfTargetSeconds: Double = 0.25,
        allowedUID: UInt32, policyDirectories: PolicyDirectories? = nil, auditAllows: Bool = false,
        auditRetention: AuditRetention = AuditRetention(), lockTriggers: LockTriggerAddresses? = nil,
        promptProgram: String? = nil, adminSettingsPath: String = Self.defaultAdminSettingsPath
    ) {
        self.promptProgram = promptProgram ?? Self.cordonNextToThisExecutable
        self.adminSettingsPath = adminSettingsPath
        self.lockTriggers = lockTriggers
        self.policyDirectories = policyDirectories
        self.auditAllows = auditAllows
        self.auditRetention = auditRetention
        self.paths = paths
        self.settingsOverlay = settingsOverlay
        self.backoff = backoff
        self.limits = limits
        self.insecureFastKDF = insecureFastKDF
        self.kdfTargetSeconds = kdfTargetSeconds
        self.allowedUID = allowedUID
    }
}

extension AgentConfiguration {
    /// `cordon` in the directory of the running executable (where `make install` puts both).
    public static var cordonNextToThisExecutable: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("cordon").path
    }

    /// The built-in default policy with the settings overlay in place of its values. It is the
    /// fallback: it fills the keys no file sets.
    public var defaultPolicy: PolicyDocument {
        var document = BuiltinPolicy.document
        document.settings = document.settings.overlaid(with: settingsOverlay)
        if trustUnboundApps { document[PolicyKeys.Apps.unknown] = .trusted }
        return document
    }

    /// The lifecycle settings the agent starts with, before any policy file is read.
    public var initialLifecycle: LifecycleConfiguration {
        LifecycleConfiguration(
            EffectivePolicy(document: defaultPolicy, source: BuiltinPolicy.source).base, backoff: backoff)
    }
}

extension LifecycleConfiguration {
    /// The lifecycle settings `settings` give — the one place they are read. A setting with no
    /// value (`reauthGraceSeconds`, `maxAttempts`, `ackDeadlineMs` are optional in the schema)
    /// takes the built-in default's, which sets each of them (`BuiltinPolicyTests`).
    public init(_ settings: EffectivePolicySettings, backoff: Backoff = Backoff()) {
        typealias Lock = PolicyKeys.Lock
        typealias Passcode = PolicyKeys.Passcode
        let builtin = Self.builtinSettings
        func value(_ setting: PolicySetting<Int, Int?>) -> Int {
            settings[setting].value ?? builtin[setting].value ?? 0
        }
        self.init(
            idleTimeoutSeconds: settings[Lock.idleTimeoutSeconds].value,
            reauthGraceSeconds: value(Lock.reauthGraceSeconds), discardKeyOnLock: settings[Lock.discardKeyOnLock].value,
            maxAttempts: value(Passcode.maxAttempts), ackDeadlineMs: value(Lock.ackDeadlineMs),
            minPasscodeLength: max(settings[Passcode.minLength].value, 1), backoff: backoff,
            onMaxAttempts: settings[Passcode.onMaxAttempts].value)
    }

    /// The lifecycle settings of the built-in default policy, with the default back-off.
    public static var builtin: LifecycleConfiguration {
        LifecycleConfiguration(builtinSettings)
    }

    /// The built-in default's settings, resolved once (read at every registration and policy change).
    private static let builtinSettings = EffectivePolicy(
        document: BuiltinPolicy.document, source: BuiltinPolicy.source
    ).base
}
