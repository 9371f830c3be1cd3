import ArgumentParser
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonServer
import CordonSystem
import CordonTPM
import Foundation
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// `cordond`: the per-user Cordon agent.
struct Cordond: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cordond",
        abstract: "The Cordon agent: keeps the container's key behind a passcode and a lock, and serves wrapped apps.",
        discussion: """
            Listens on $XDG_RUNTIME_DIR/cordon/agent.sock, or on the socket systemd passes (socket
            activation, see cordond.socket). Directories can be overridden with the flags below
            or with CORDON_RUNTIME_DIR, CORDON_DATA_DIR and CORDON_CONFIG_DIR.
            """)

    @Option(help: "Directory for the socket (default: $XDG_RUNTIME_DIR/cordon).")
    var runtimeDir: String?
    @Option(help: "Directory for the database (default: $XDG_DATA_HOME/cordon).")
    var dataDir: String?
    @Option(help: "Directory for user settings and policy (default: $XDG_CONFIG_HOME/cordon).")
    var configDir: String?
    @Option(help: "Seconds without activity before the container locks; 0 disables (default: the built-in policy's).")
    var idleTimeout: Int?
    @Option(help: "Seconds after a lock during which unlocking needs no passcode (default: the built-in policy's).")
    var reauthGrace: Int?
    @Option(help: "Failed passcode attempts before onMaxAttempts applies (default: the built-in policy's).")
    var maxAttempts: Int?
    @Option(help: "Milliseconds an app has to acknowledge a revocation (default: the built-in policy's).")
    var ackDeadlineMs: Int?
    @Option(help: "Failed attempts allowed before the back-off delay starts (default: 3; test mode only).")
    var backoffFreeAttempts: Int?
    @Option(help: "First back-off delay in seconds, doubling per failure up to 300 (default: 1; test mode only).")
    var backoffBaseSeconds: Double?
    @Option(
        help:
            "Longest back-off delay in seconds, and the wait between attempts once locked out (default: 300; test mode only)."
    )
    var backoffMaxSeconds: Double?
    @Flag(
        help:
            "Test mode: accept admin inputs (the value flags, and admin paths not owned by root) from flags and environment; logged, and shown in status, doctor and every audit record. Also CORDON_TEST_MODE=1."
    )
    var testMode = false
    @Option(help: "Admin policy directory (default: /etc/cordon/policy.d; also CORDON_ADMIN_POLICY_DIR).")
    var adminPolicyDir: String?
    @Option(help: "Trusted policy signing keys (default: /etc/cordon/trust; also CORDON_TRUST_DIR).")
    var trustDir: String?
    @Option(
        help:
            "cordon-fleetd's directory of verified commands and status; root's outside test mode (default: /var/lib/cordon/fleet; also CORDON_FLEET_DIR)."
    )
    var fleetDir: String?
    @Flag(help: "Audit allowed decisions too (denies are always audited).")
    var auditAllows = false
    @Option(help: "What max attempts does by default: wipe or lockout (default: the built-in policy's).")
    var onMaxAttempts: String?
    @Option(
        help:
            "Milliseconds one passcode derivation should take when scrypt is tuned on init (default: 250; test mode only)."
    )
    var kdfTargetMs: Int?
    @Flag(help: "Discard the key on every lock (every lock becomes a revocation).")
    var discardKeyOnLock = false
    @Flag(help: "INSECURE, tests only: near-free passcode KDF. Also CORDON_INSECURE_FAST_KDF=1.")
    var insecureFastKdf = false
    @Option(
        help:
            "D-Bus address of the system bus, for logind and fprintd (default: unix:path=/run/dbus/system_bus_socket; test mode only; also CORDON_SYSTEM_BUS_ADDRESS)."
    )
    var systemBusAddress: String?
    @Option(help: "D-Bus address of the session bus, for screen savers (also CORDON_SESSION_BUS_ADDRESS).")
    var sessionBusAddress: String?
    @Option(
        help:
            "The program RequestUnlock runs to ask for the passcode (default: cordon next to cordond; also CORDON_PROMPT_PROGRAM)."
    )
    var promptProgram: String?
    @Option(
        help:
            "Admin settings naming the pinentry RequestUnlock's prompt runs; trusted only when owned by root (default: /etc/cordon/settings.json; also CORDON_ADMIN_SETTINGS)."
    )
    var adminSettings: String?
    @Option(
        help:
            "A Flatpak installation whose apps a \"flatpak\" binding may match; repeatable (default: /var/lib/flatpak; others must be root's outside test mode)."
    )
    var flatpakInstallation: [String] = []
    @Option(
        help:
            "TCTI configuration of the TPM that seals the key, e.g. swtpm:host=127.0.0.1,port=2321 (default: device:/dev/tpmrm0; test mode only; also CORDON_TPM_TCTI)."
    )
    var tpmTcti: String?
    @Option(
        help: ArgumentHelp(
            "A PEM file of CA certificates CT-KIP servers are validated against instead of the system's (test mode only).",
            valueName: "file"))
    var ctkipCa: String?
    @Option(
        help: ArgumentHelp(
            "The directory posture checks read under instead of / (a fixture tree; test mode only).",
            valueName: "dir"))
    var postureRoot: String?
    @Option(help: "Seconds between posture readings while an app is registered (default: 300; test mode only).")
    var postureInterval: Double?
    @Option(
        help: ArgumentHelp(
            "The program the identity code flow opens the authorization URL with, the URL appended (default: xdg-open; test mode only).",
            valueName: "program"))
    var identityBrowser: String?
    @Option(
        help:
            "Seconds between identity sign-in polls instead of the provider's interval (default: the provider's; test mode only)."
    )
    var identityPollDelay: Double?
    @Option(help: "Connections one process may hold (default: 64).")
    var maxConnectionsPerProcess: Int = ConnectionLimits.standard.maxConnectionsPerProcess
    @Option(help: "Seconds a connection that has not registered an app may stay idle; 0 disables (default: 900).")
    var connectionIdleTimeout: Double = Double(ConnectionLimits.standard.idleConnectionTimeout.components.seconds)
    @Option(
        help: ArgumentHelp(
            "Write the agent's metrics (Prometheus text format) to this .prom file every 15 s and at exit, for node_exporter's textfile collector; in a directory only you or root can write (default: none; also CORDON_METRICS_FILE).",
            valueName: "path"))
    var metricsFile: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"
    @Option(help: "Log target: auto (the journal when stderr is connected to it), journal, or stderr.")
    var logTarget: String = "auto"

    /// Where cordon-fleetd hands verified commands to the agents.
    static let defaultFleetDirectory = "/var/lib/cordon/fleet"

    /// The system's own bus: the only one used outside test mode, whatever
    /// `DBUS_SYSTEM_BUS_ADDRESS` says.
    static let systemBus = "unix:path=/run/dbus/system_bus_socket"

    /// The system bus the agent uses: outside test mode always the system's own; in test mode
    /// the flag, `CORDON_SYSTEM_BUS_ADDRESS`, then `DBUS_SYSTEM_BUS_ADDRESS`.
    func systemBus(_ environment: [String: String], testMode: Bool) -> String {
        guard testMode else { return Self.systemBus }
        for candidate in [
            systemBusAddress, environment["CORDON_SYSTEM_BUS_ADDRESS"], environment["DBUS_SYSTEM_BUS_ADDRESS"],
        ] {
            if let candidate, !candidate.isEmpty { return candidate }
        }
        return Self.systemBus
    }

    /// The admin inputs this invocation names (docs/THREAT-MODEL.md, "Admin policy").
    func adminInputs(_ environment: [String: String]) -> AdminInputs {
        var values: [String] = []
        for (given, name) in [
            (idleTimeout != nil, "--idle-timeout"), (reauthGrace != nil, "--reauth-grace"),
            (maxAttempts != nil, "--max-attempts"), (ackDeadlineMs != nil, "--ack-deadline-ms"),
            (onMaxAttempts != nil, "--on-max-attempts"), (discardKeyOnLock, "--discard-key-on-lock"),
            (backoffFreeAttempts != nil, "--backoff-free-attempts"),
            (backoffBaseSeconds != nil, "--backoff-base-seconds"),
            (backoffMaxSeconds != nil, "--backoff-max-seconds"), (kdfTargetMs != nil, "--kdf-target-ms"),
            (insecureFastKdf || environment["CORDON_INSECURE_FAST_KDF"] == "1", "--insecure-fast-kdf"),
        ] where given {
            values.append(name)
        }
        // A TPM of the user's own making (a simulator) must not count as hardware protection.
        if let tcti = tpmTcti ?? environment["CORDON_TPM_TCTI"].flatMap({ $0.isEmpty ? nil : $0 }),
            tcti != TPMConnection.defaultTCTI
        {
            values.append(tpmTcti != nil ? "--tpm-tcti" : "CORDON_TPM_TCTI")
        }
        // A bus of the user's own making would carry a fake fprintd (a finger that always
        // matches) and a fake logind (no lock ever): the system bus is the system's.
        if let address = systemBusAddress
            ?? environment["CORDON_SYSTEM_BUS_ADDRESS"].flatMap({ $0.isEmpty ? nil : $0 }),
            address != Self.systemBus
        {
            values.append(systemBusAddress != nil ? "--system-bus-address" : "CORDON_SYSTEM_BUS_ADDRESS")
        }
        // CA roots of the user's own making would let any server provision tokens.
        if ctkipCa != nil { values.append("--ctkip-ca") }
        // A fixture tree would fake the device's posture; a long interval would delay its conditions.
        if postureRoot != nil { values.append("--posture-root") }
        if postureInterval != nil { values.append("--posture-interval") }
        // A browser of the user's own making sees every authorization URL; a short poll delay
        // makes the agent poll providers faster than they ask (docs/ARCHITECTURE.md, "Identity").
        if identityBrowser != nil { values.append("--identity-browser") }
        if identityPollDelay != nil { values.append("--identity-poll-delay") }
        var paths: [AdminInputs.PathInput] = []
        for (flag, variable, name, role, fallback, what) in [
            (
                adminPolicyDir, "CORDON_ADMIN_POLICY_DIR", "--admin-policy-dir", AdminInputs.PathInput.Role.adminPolicy,
                "/etc/cordon/policy.d", "the admin policy directory"
            ),
            (trustDir, "CORDON_TRUST_DIR", "--trust-dir", .trust, "/etc/cordon/trust", "the trust directory"),
            (fleetDir, "CORDON_FLEET_DIR", "--fleet-dir", .fleet, Self.defaultFleetDirectory, "the fleet directory"),
        ] {
            if let path = flag ?? environment[variable].flatMap({ $0.isEmpty ? nil : $0 }) {
                paths.append(AdminInputs.PathInput(role: role, name: flag != nil ? name : variable, path: path))
            } else {
                // The default is opened too, though it need not exist yet: an administrator may create it.
                paths.append(AdminInputs.PathInput(role: role, name: what, path: fallback, allowMissing: true))
            }
        }
        if let path = adminSettings ?? environment["CORDON_ADMIN_SETTINGS"].flatMap({ $0.isEmpty ? nil : $0 }) {
            let name = adminSettings != nil ? "--admin-settings" : "CORDON_ADMIN_SETTINGS"
            paths.append(AdminInputs.PathInput(role: .settings, name: name, path: path, kind: .file))
        }
        if let path = promptProgram ?? environment["CORDON_PROMPT_PROGRAM"].flatMap({ $0.isEmpty ? nil : $0 }) {
            let name = promptProgram != nil ? "--prompt-program" : "CORDON_PROMPT_PROGRAM"
            paths.append(AdminInputs.PathInput(role: .prompt, name: name, path: path, kind: .program))
        }
        for path in flatpakInstallation {
            paths.append(AdminInputs.PathInput(role: .flatpak, name: "--flatpak-installation", path: path))
        }
        if flatpakInstallation.isEmpty {
            // The system installation is opened like any admin input, though Flatpak need not be
            // installed yet: a binding then matches through the held directory, never by name.
            paths.append(
                AdminInputs.PathInput(
                    role: .flatpak, name: "the system Flatpak installation", path: FlatpakSandbox.systemInstallation,
                    allowMissing: true))
        }
        return AdminInputs(values: values, paths: paths)
    }

    func validate() throws {
        if let onMaxAttempts, !["wipe", "lockout"].contains(onMaxAttempts) {
            throw ValidationError("--on-max-attempts must be wipe or lockout, not \(onMaxAttempts)")
        }
        guard maxConnectionsPerProcess > 0 else {
            throw ValidationError("--max-connections-per-process must be at least 1, not \(maxConnectionsPerProcess)")
        }
        guard connectionIdleTimeout >= 0, connectionIdleTimeout.isFinite else {
            throw ValidationError("--connection-idle-timeout must be 0 or more seconds, not \(connectionIdleTimeout)")
        }
        if let postureInterval, !(postureInterval > 0 && postureInterval.isFinite) {
            throw ValidationError("--posture-interval must be more than 0 seconds, not \(postureInterval)")
        }
        if let identityPollDelay, !(identityPollDelay >= 0 && identityPollDelay.isFinite) {
            throw ValidationError("--identity-poll-delay must be 0 or more seconds, not \(identityPollDelay)")
        }
        if let identityBrowser, identityBrowser.isEmpty {
            throw ValidationError("--identity-browser must name a program")
        }
        guard LogTarget(rawValue: logTarget) != nil else {
            throw ValidationError("--log-target must be auto, journal or stderr, not \(logTarget)")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let target = (LogTarget(rawValue: logTarget) ?? .auto).resolved(environment: environment)
        LoggingSystem.bootstrap { label in
            if target == .journal {
                var handler = JournaldLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "cordond")
        // The TSS logs every TPM error response to stderr (a wrong passcode is one); the agent
        // logs the outcome itself. Set before any thread starts; an explicit TSS2_LOG wins.
        setenv("TSS2_LOG", "all+none", 0)
        do {
            try ProcessHardening.disableDumping()
        } catch {
            logger.warning("could not make the process non-dumpable: \(error)")
        }
        let uid = getuid()
        let paths = CordonPaths.resolve(
            environment: environment, uid: uid, runtime: runtimeDir, data: dataDir, config: configDir)
        let inTestMode = testMode || environment["CORDON_TEST_MODE"] == "1"
        func refuse(_ refusal: AdminInputs.Refusal) throws -> Never {
            logger.critical("refusing to start: \(refusal.message)")
            FileHandle.standardError.write(
                Data("cordond: refusing to start: \(refusal.message)\n  hint: \(refusal.hint)\n".utf8))
            throw ExitCode(2)
        }
        // Outside test mode every admin path is opened now, once, and read through what was opened.
        let inputs = adminInputs(environment)
        var opened: [(AdminInputs.PathInput, AdminPath)] = []
        if !inTestMode {
            do {
                opened = Array(zip(inputs.paths, try inputs.open()))
            } catch {
                try refuse(error)
            }
        }
        func held(_ role: AdminInputs.PathInput.Role) -> [AdminPath] {
            opened.filter { $0.0.role == role }.map(\.1)
        }
        for (input, path) in opened {
            let state = path.isComplete ? "held" : "held at its deepest existing directory, the rest not there yet"
            logger.debug(
                "admin input opened", metadata: ["input": "\(input.name)", "path": "\(path.path)", "state": "\(state)"])
        }
        if inTestMode {
            logger.warning(
                "TEST MODE: admin inputs come from flags and environment; status, doctor and every audit record say so")
        } else if let ignored = environment["DBUS_SYSTEM_BUS_ADDRESS"], !ignored.isEmpty, ignored != Self.systemBus {
            logger.notice(
                "DBUS_SYSTEM_BUS_ADDRESS is ignored outside test mode: the system bus is the system's",
                metadata: ["ignored": "\(ignored)", "used": "\(Self.systemBus)"])
        }
        // The test-mode lifecycle flags are policy settings: an overlay laid over the built-in
        // default, beneath every policy file; a flag left out sets nothing.
        var overlay = PolicySettingValues()
        overlay[PolicyKeys.Lock.idleTimeoutSeconds] = idleTimeout
        overlay[PolicyKeys.Lock.reauthGraceSeconds] = reauthGrace
        overlay[PolicyKeys.Passcode.maxAttempts] = maxAttempts
        overlay[PolicyKeys.Lock.ackDeadlineMs] = ackDeadlineMs
        overlay[PolicyKeys.Passcode.onMaxAttempts] = onMaxAttempts.flatMap(MaxAttemptsAction.init(rawValue:))
        if discardKeyOnLock { overlay[PolicyKeys.Lock.discardKeyOnLock] = true }
        let backoff = Backoff(
            freeAttempts: backoffFreeAttempts ?? 3, baseSeconds: backoffBaseSeconds ?? 1,
            maxSeconds: backoffMaxSeconds ?? 300)
        func pick(_ flag: String?, _ variable: String, _ fallback: String) -> String {
            if let flag, !flag.isEmpty { return flag }
            if let value = environment[variable], !value.isEmpty { return value }
            return fallback
        }
        let policyDirectories = PolicyDirectories(
            admin: pick(adminPolicyDir, "CORDON_ADMIN_POLICY_DIR", "/etc/cordon/policy.d"),
            user: paths.configDirectory + "/policy.d",
            trust: pick(trustDir, "CORDON_TRUST_DIR", "/etc/cordon/trust"), openedAdmin: held(.adminPolicy).first,
            openedTrust: held(.trust).first)
        var limits = ConnectionLimits.standard
        limits.maxConnectionsPerProcess = maxConnectionsPerProcess
        limits.idleConnectionTimeout = .milliseconds(Int64(connectionIdleTimeout * 1000))
        var configuration = AgentConfiguration(
            paths: paths, settingsOverlay: overlay, backoff: backoff, limits: limits,
            insecureFastKDF: insecureFastKdf || environment["CORDON_INSECURE_FAST_KDF"] == "1",
            kdfTargetSeconds: Double(kdfTargetMs ?? 250) / 1000, allowedUID: uid, policyDirectories: policyDirectories,
            auditAllows: auditAllows,
            lockTriggers: LockTriggerAddresses(
                system: systemBus(environment, testMode: inTestMode),
                session: pick(sessionBusAddress, "CORDON_SESSION_BUS_ADDRESS", ""),
                sessionID: environment["XDG_SESSION_ID"]),
            promptProgram: pick(promptProgram, "CORDON_PROMPT_PROGRAM", AgentConfiguration.cordonNextToThisExecutable),
            adminSettingsPath: pick(
                adminSettings, "CORDON_ADMIN_SETTINGS", AgentConfiguration.defaultAdminSettingsPath))
        configuration.testMode = inTestMode
        if !flatpakInstallation.isEmpty { configuration.flatpakInstallations = flatpakInstallation }
        // Opened at start: the installation is reached through its descriptor from then on.
        if !held(.flatpak).isEmpty { configuration.flatpakInstallations = held(.flatpak).map(\.descriptorPath) }
        configuration.openedAdminSettings = held(.settings).first
        configuration.openedPromptProgram = held(.prompt).first
        configuration.openedAdminPaths = opened.map(\.1)
        if let problem = configuration.adminSettingsProblem, let settings = held(.settings).first {
            let name = adminSettings != nil ? "--admin-settings" : "CORDON_ADMIN_SETTINGS"
            try refuse(
                AdminInputs.Refusal(
                    message: "\(name) names \(settings.path), which names a pinentry that cannot be trusted: \(problem)"
                ))
        }
        configuration.tpmTCTI = pick(tpmTcti, "CORDON_TPM_TCTI", TPMConnection.defaultTCTI)
        configuration.ctkipCAFile = ctkipCa
        if let postureRoot { configuration.postureRoot = postureRoot }
        if let postureInterval { configuration.postureInterval = postureInterval }
        if let identityBrowser { configuration.identityBrowser = [identityBrowser] }
        configuration.identityPollDelay = identityPollDelay
        configuration.fleetDirectory = pick(fleetDir, "CORDON_FLEET_DIR", Self.defaultFleetDirectory)
        configuration.openedFleetDirectory = held(.fleet).first
        if inTestMode, let point = environment["CORDON_TEST_FLEET_CRASH"].flatMap(FleetCrashPoint.init) {
            logger.warning("TEST MODE: CORDON_TEST_FLEET_CRASH=\(point): a fleet command exits as killed")
            configuration.fleetCrashPoint = point
        }
        let wanted = DescriptorLimit.needed(forConnections: configuration.limits.maxConnectionsPerUID)
        do {
            let limit = try DescriptorLimit.raise(to: wanted)
            if limit.soft < wanted {
                logger.warning(
                    "the descriptor limit caps connections below the agent's limit; raise LimitNOFILE=",
                    metadata: ["soft": "\(limit.soft)", "hard": "\(limit.hard)", "wanted": "\(wanted)"])
            }
        } catch {
            logger.warning("could not raise the descriptor limit: \(error)")
        }
        var metricsFile: MetricsFile?
        if let path = self.metricsFile ?? environment["CORDON_METRICS_FILE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            do {
                let file = try MetricsFile(path: path)
                try file.check()
                metricsFile = file
            } catch {
                try refuse(
                    AdminInputs.Refusal(
                        message: "the metrics file: \(error)",
                        hint:
                            "name a .prom file in a directory only you (or root) can write, e.g. ~/.local/state/cordon/agent.prom"
                    ))
            }
            // One registry for the process: the agent's metrics, and any a library records through swift-metrics.
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: configuration.metrics.registry))
        }
        let server: AgentServer
        do {
            server = try AgentServer(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        // Started together; on SIGTERM/SIGINT shut down in reverse order, one after the other:
        // the watchdog, the lock triggers and the watchers stop before the agent revokes every
        // key; its loop goes away only once the group has returned (`AgentServer.finish()`). Each
        // is named here: without a name the group makes one with `"\(service)"`, which reflects
        // every stored property (about 3.6 ms of a socket-activated start, docs/PERFORMANCE.md).
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: AgentService(server: server), serviceName: "AgentService"),
                    .init(service: PolicyWatcherService(server: server), serviceName: "PolicyWatcherService"),
                    .init(service: FleetWatcherService(server: server), serviceName: "FleetWatcherService"),
                    .init(service: LockTriggerService(server: server), serviceName: "LockTriggerService"),
                    .init(service: WatchdogService(server: server), serviceName: "WatchdogService"),
                ]
                    + (metricsFile.map {
                        [
                            .init(
                                service: MetricsFileService(server: server, file: $0), serviceName: "MetricsFileService"
                            )
                        ]
                    } ?? []),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            logger.critical("stopped on error: \(error)")
            await server.finish()
            throw ExitCode(1)
        }
        await server.finish()
    }
}
