import Testing

@testable import CordonPolicy

/// Walks every key of the schema, in the base and inside `overrides[]`, and shows that each one
/// either changes the value the agent reads or is refused by the parser: no key parses and then
/// does nothing. The agent reads per-app keys through `forApp(_:)` and the container-wide keys
/// through `containerSettings(registeredApps:)` (the end-to-end half is
/// `PerAppLockSettingsTests`).
@Suite struct OverrideKeyWalkTests {
    static let app = "com.example.vault"
    static let source = PolicySource(path: "/etc/cordon/policy.d/walk.json", origin: .admin)

    /// A value stricter than the loosest default, as JSON, for every key of every section.
    static let strictValues: [String: [String: String]] = [
        "apps": [
            "managed": #"[{"id": "com.example.vault", "executables": ["/usr/bin/true"]}]"#, "unknown": #""refuse""#,
        ],
        "passcode": [
            "minLength": "8", "kind": #""alphanumeric""#, "allowSimple": "false", "maxAttempts": "3",
            "onMaxAttempts": #""wipe""#, "hardware": #""required""#, "pcrs": "[7]",
            "biometrics": #""allowed""#,
        ],
        "lock": [
            "idleTimeoutSeconds": "60", "onScreenLock": "true", "onSuspend": "true", "onSessionIdle": "true",
            "reauthGraceSeconds": "0",
            "discardKeyOnLock": "true", "ackDeadlineMs": "500", "onAckTimeout": #""terminate""#,
        ],
        "pasteboard": ["copyOut": #""blocked""#, "maxChars": "10", "clearOnLock": "true"],
        "documents": [
            "sendTo": #""none""#, "receiveFrom": #""none""#, "allowedTargets": #"["com.example.mail"]"#,
            "allowedSources": #"["com.example.mail"]"#, "saveCopies": #""block""#, "saveLocations": #"["/srv/*"]"#,
            "blockedTypes": #"[".exe"]"#,
        ],
        "storage": ["dataAccess": #""whenUnlocked""#, "wipeOnAckTimeout": "true"],
        "conditions": [
            "debuggerAttached": #""block""#, "preloadInjected": #""block""#, "executableMismatch": #""block""#,
            "secureBoot": #""wipe""#, "kernelLockdown": #""block""#, "diskEncryption": #""wipe""#,
            "screenLock": #""warn""#, "kernelTaint": #""block""#, "ptraceScope": #""block""#,
            "osVersion": #""block""#, "kernelVersion": #""block""#, "postureUnknown": #""fail""#,
            "minimumVersions": #"["kernel 99"]"#, "policyStale": #""lock""#,
        ],
        "tokens": [
            "importKinds": #"["ctf"]"#, "pinRequired": "true", "maxTokens": "1",
            "codeReaders": #"["com.example.mail"]"#,
            "cliReadsCodes": "false", "dataAccess": #""whenUnlocked""#,
            // Unset is already the strictest (false): the one value that changes it is true.
            "ctkipAllowInsecure": "true",
        ],
        "identity": [
            "providers":
                #"[{"name": "corp", "endpoints": {"token": "https://idp.example/token", "deviceAuthorization": "https://idp.example/device"}, "clientId": "c", "flow": "device"}]"#,
            "cpaProviders": #"[{"name": "bbc", "baseURL": "https://ap.example", "domains": ["tv.example"]}]"#,
            "domains": #"[{"domain": "corp.example", "provider": "corp"}]"#,
            "accessGroups": #"[{"name": "office", "apps": ["com.example.mail"], "domains": ["corp.example"]}]"#,
            "offlineGraceMinutes": "60", "offlineWipeDays": "7",
        ],
        "network": [
            "pins": #"[{"hosts": ["api.example.com"], "pinSha256": ["47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]}]"#,
            "unpinnedHosts": #""deny""#,
            "clientCertificate": #"{"certificate": "/etc/cordon/app.pem", "key": "/etc/cordon/app.key"}"#,
            "onLock": #""cut""#,
        ],
    ]

    static func parse(_ text: String) -> Result<PolicyDocument, PolicyParseFailure> {
        PolicyParser.parse(text, source: source)
    }

    static func value(_ pointer: String, in steps: [PointedStep]) -> String? {
        steps.first { $0.pointer == pointer }?.step.value
    }

    @Test func everyKeyOfTheSchemaHasAStrictValueHere() {
        for (section, keys) in PolicyParser.Rules.sectionKeys {
            #expect(Set(Self.strictValues[section]?.keys ?? [:].keys) == Set(keys), "\(section)")
        }
    }

    @Test func everyBaseKeyChangesTheEffectivePolicy() throws {
        for (section, keys) in PolicyParser.Rules.sectionKeys {
            for key in keys {
                let value = try #require(Self.strictValues[section]?[key])
                let text = #"{"schema": "cordon.policy.v1", "\#(section)": {"\#(key)": \#(value)}}"#
                let document = try Self.parse(text).get()
                let policy = EffectivePolicy(document: document, source: Self.source)
                let steps = policy.managedSteps() + policy.base.pointedSteps()
                let empty = EffectivePolicy.empty
                let before = empty.managedSteps() + empty.base.pointedSteps()
                let pointer = "/\(section)/\(key)"
                let changed = Self.value(pointer, in: steps).map { $0 != Self.value(pointer, in: before) } ?? false
                // `apps.managed` is listed per app id.
                let boundApp = section == "apps" && key == "managed" && policy.managedApps[Self.app] != nil
                #expect(changed || boundApp, "\(pointer) set to \(value) changes nothing")
            }
        }
    }

    @Test func everyOverrideKeyTakesEffectOrIsRefused() throws {
        // `apps` inside an override is the list of app ids it applies to, never the section.
        for (section, keys) in PolicyParser.Rules.sectionKeys where section != "apps" {
            for key in keys {
                let value = try #require(Self.strictValues[section]?[key])
                let text = #"""
                    {"schema": "cordon.policy.v1",
                     "overrides": [{"apps": ["\#(Self.app)"], "\#(section)": {"\#(key)": \#(value)}}]}
                    """#
                let pointer = "/\(section)/\(key)"
                let scope = try #require(PolicyKeys.scope(of: "\(section).\(key)"))
                guard scope != .global else {
                    // Global settings are refused inside an override, naming where.
                    let failure = try #require(Self.parse(text).failure, "\(pointer) in an override must be refused")
                    #expect(failure.diagnostics.contains { $0.pointer.hasPrefix("/overrides/0/\(section)") })
                    continue
                }
                let policy = EffectivePolicy(document: try Self.parse(text).get(), source: Self.source)
                let loosest = EffectivePolicy.empty.base.pointedSteps()
                let read: [PointedStep]
                if scope == .container {
                    // The container reads it while the app is registered, and not otherwise.
                    read = policy.containerSettings(registeredApps: [Self.app]).pointedSteps()
                    let unregistered = policy.containerSettings(registeredApps: ["com.example.other"])
                    #expect(Self.value(pointer, in: unregistered.pointedSteps()) == Self.value(pointer, in: loosest))
                } else {
                    // Per app: the app named reads it, another app does not.
                    read = policy.forApp(Self.app).pointedSteps()
                    #expect(
                        Self.value(pointer, in: policy.forApp("com.example.other").pointedSteps())
                            == Self.value(pointer, in: loosest))
                }
                #expect(
                    Self.value(pointer, in: read) != Self.value(pointer, in: loosest),
                    "overrides[].\(section).\(key) set to \(value) changes nothing")
            }
        }
    }

    @Test func theLockKeysHaveTheDocumentedScopes() {
        let container = [
            "idleTimeoutSeconds", "reauthGraceSeconds", "onScreenLock", "onSuspend", "onSessionIdle",
            "discardKeyOnLock",
        ]
        for key in container { #expect(PolicyKeys.scope(of: "lock.\(key)") == .container, "\(key)") }
        for key in ["ackDeadlineMs", "onAckTimeout"] { #expect(PolicyKeys.scope(of: "lock.\(key)") == .perApp) }
        let lockKeys = PolicyParser.Rules.sectionKeys.first { $0.section == "lock" }?.keys ?? []
        #expect(Set(lockKeys) == Set(container + ["ackDeadlineMs", "onAckTimeout"]))
        let globals = PolicyKeys.names.filter { PolicyKeys.scope(of: $0) == .global }
        #expect(
            globals.allSatisfy {
                $0.hasPrefix("apps.") || $0.hasPrefix("passcode.") || $0.hasPrefix("tokens.")
                    || $0.hasPrefix("identity.") || $0 == "conditions.minimumVersions" || $0 == "conditions.policyStale"
            })
    }

    @Test func containerLockTakesTheStrictestOfTheRegisteredApps() throws {
        let text = #"""
            {"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 600, "reauthGraceSeconds": 300},
             "overrides": [{"apps": ["com.example.a"], "lock": {"idleTimeoutSeconds": 120}},
                           {"apps": ["com.example.b"], "lock": {"idleTimeoutSeconds": 60, "reauthGraceSeconds": 30}}]}
            """#
        let policy = EffectivePolicy(document: try Self.parse(text).get(), source: Self.source)
        typealias Lock = PolicyKeys.Lock
        #expect(policy.containerSettings(registeredApps: [])[Lock.idleTimeoutSeconds].value == 600)
        #expect(policy.containerSettings(registeredApps: ["com.example.a"])[Lock.idleTimeoutSeconds].value == 120)
        let both = policy.containerSettings(registeredApps: ["com.example.a", "com.example.b", "com.example.a"])
        #expect(both[Lock.idleTimeoutSeconds].value == 60)
        #expect(both[Lock.reauthGraceSeconds].value == 30)
        #expect(both[Lock.idleTimeoutSeconds].rules.map(\.pointer) == ["/overrides/1/lock/idleTimeoutSeconds"])
        #expect(policy.containerSettings(registeredApps: ["com.example.c"]) == policy.base)
    }
}

extension Result {
    /// The failure, if any.
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
