import CordonProtocol
import Foundation
import Testing

@Suite("InterfaceDescriptions")
struct InterfaceDescriptionsTests {
    @Test func namesListExactlyTheDescribedInterfaces() {
        #expect(
            InterfaceDescriptions.names == [
                "org.varlink.service", "io.cordon.Agent", "io.cordon.App", "io.cordon.Pasteboard", "io.cordon.Policy",
                "io.cordon.Audit", "io.cordon.Posture", "io.cordon.Storage", "io.cordon.Tokens", "io.cordon.Identity",
            ])
        #expect(Set(InterfaceDescriptions.names) == Set(InterfaceDescriptions.all.keys))
        #expect(InterfaceDescriptions.all["org.varlink.service"] == InterfaceDescriptions.service)
        #expect(InterfaceDescriptions.all["io.cordon.Agent"] == InterfaceDescriptions.agent)
        #expect(InterfaceDescriptions.all["io.cordon.App"] == InterfaceDescriptions.app)
        #expect(!InterfaceDescriptions.version.isEmpty)
    }

    @Test(arguments: InterfaceDescriptions.names)
    func startsWithCommentsThenItsInterfaceLine(name: String) throws {
        let text = try #require(InterfaceDescriptions.all[name])
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex { !$0.isEmpty && !$0.hasPrefix("#") })
        #expect(lines[first] == "interface \(name)")
        #expect(lines[..<first].allSatisfy { $0.isEmpty || $0.hasPrefix("#") })
        #expect(lines.filter { $0.hasPrefix("interface ") }.count == 1)
    }

    @Test(arguments: InterfaceDescriptions.names)
    func isWellFormed(name: String) throws {
        let interface = try #require(InterfaceDescriptions.parsed(name))
        var depth = 0
        for character in interface.text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            #expect(depth >= 0)
        }
        #expect(depth == 0, "parentheses balance")
        #expect(!interface.text.contains("\t"))
        // Every top-level line starts a declaration; field lines are indented.
        for line in interface.text.split(separator: "\n") where !line.hasPrefix(" ") && !line.hasPrefix("#") {
            let keyword = line.prefix { $0 != " " }
            #expect(["interface", "type", "method", "error", ")"].contains(String(keyword)), "\(line)")
        }
        let declared = interface.declared("method") + interface.declared("error") + interface.declared("type")
        #expect(Set(declared).count == declared.count, "no name is declared twice")
    }

    @Test(arguments: Method.allCases)
    func everyMethodIsDeclaredInItsInterface(method: Method) throws {
        #expect(InterfaceDescriptions.names.contains(method.interfaceName))
        let text = try #require(InterfaceDescriptions.all[method.interfaceName])
        #expect(text.contains("method \(method.memberName)("))
        #expect(method.rawValue == "\(method.interfaceName).\(method.memberName)")
        #expect(VarlinkCallHeader(method: method.rawValue).interface == method.interfaceName)
        #expect(VarlinkCallHeader(method: method.rawValue).member == method.memberName)
    }

    @Test func everyDeclaredMethodIsServed() throws {
        for name in InterfaceDescriptions.names {
            let interface = try #require(InterfaceDescriptions.parsed(name))
            for member in interface.declared("method") {
                #expect(Method(rawValue: "\(name).\(member)") != nil, "\(name).\(member) has no Method case")
            }
        }
    }

    @Test(arguments: everyCordonError)
    func everyCordonErrorIsDeclaredWithItsParameters(error: CordonError) throws {
        let name = error.varlinkName
        let dot = try #require(name.lastIndex(of: "."))
        let interface = try #require(InterfaceDescriptions.parsed(String(name[..<dot])))
        let member = String(name[name.index(after: dot)...])
        let parameters = try #require(interface.errorParameters(member), "error \(member) is not declared")
        #expect(Set(parameters) == Set(error.varlinkParameters.keys))
    }

    @Test func connectionErrorsAreDeclared() throws {
        let errors: [VarlinkError] = [
            .invalidMessage(reason: "r"), .messageTooLarge(limit: 1),
            .interfaceNotFound("i"), .methodNotFound("m"), .methodNotImplemented("m"), .invalidParameter("p"),
            .permissionDenied, .expectedMore,
        ]
        for error in errors {
            let dot = try #require(error.name.lastIndex(of: "."))
            let interface = try #require(InterfaceDescriptions.parsed(String(error.name[..<dot])))
            let member = String(error.name[error.name.index(after: dot)...])
            let parameters = try #require(interface.errorParameters(member), "error \(member) is not declared")
            #expect(Set(parameters) == Set(error.parameters.keys), "\(error.name)")
        }
    }

    @Test func enumTypesMatchTheSwiftVocabulary() throws {
        let agent = try #require(InterfaceDescriptions.parsed("io.cordon.Agent"))
        let app = try #require(InterfaceDescriptions.parsed("io.cordon.App"))
        let states = LifecycleState.allCases.map(\.rawValue)
        #expect(agent.typeFields("State") == states)
        #expect(app.typeFields("State") == states)
        #expect(agent.typeFields("Compliance") == Compliance.allCases.map(\.rawValue))
        #expect(agent.typeFields("FreezeMethod") == FreezeMethod.allCases.map(\.rawValue))
        #expect(agent.typeFields("ProcessState") == ProcessState.allCases.map(\.rawValue))
        #expect(app.typeFields("Enforcement") == EnforcementAction.allCases.map(\.rawValue))
        let document = DocumentInfo(path: "/p", contentType: "t", sender: "s", id: "d")
        #expect(Set(try #require(app.typeFields("Document"))) == (try jsonKeys(document)))
        #expect(app.typeFields("Kind") == EventKind.allCases.map(\.rawValue))
        #expect(app.typeFields("Reason") == EventReason.allCases.map(\.rawValue))
        let acknowledge = try #require(app.parenthesized(after: "method", "Acknowledge"))
        #expect(acknowledge.contains("status: (\(AcknowledgeStatus.allCases.map(\.rawValue).joined(separator: ", ")))"))
    }

    @Test func structTypesMatchTheSwiftTypes() throws {
        let agent = try #require(InterfaceDescriptions.parsed("io.cordon.Agent"))
        let app = try #require(InterfaceDescriptions.parsed("io.cordon.App"))
        let status = AgentStatus(
            state: .unlocked, seq: 1, failedAttempts: 0, maxAttempts: 10, retryAfterSeconds: 0, idleTimeoutSeconds: 1,
            reauthGraceSeconds: 1, ackDeadlineMs: 1, apps: 0, version: "v", insecureKDF: false,
            lockTriggers: [], auditProblem: AuditProblem(since: 1, unstored: 2, error: "e"), testMode: true,
            keyProtection: KeyProtectionStatus(
                kind: "tpm+pcrs", pcrs: [7], attemptsLeft: 3, maxFailures: 32, inLockout: false, retryAfterSeconds: 0,
                problem: "p", warning: "w", stateAnchor: "TPM NV counter 0x01234567"), onMaxAttempts: "wipe",
            fleet: FleetStatus(
                device: "d", verifiedAt: 1, staleAfter: 2, stale: false, policyStale: "off",
                lastCommand: "#1 lock done",
                lastCommandAt: 3, problem: "p"))
        #expect(Set(try #require(agent.typeFields("Status"))) == (try jsonKeys(status)))
        let fleet = try #require(status.fleet)
        #expect(Set(try #require(agent.typeFields("Fleet"))) == (try jsonKeys(fleet)))
        let protection = try #require(status.keyProtection)
        #expect(Set(try #require(agent.typeFields("KeyProtection"))) == (try jsonKeys(protection)))
        let problem = AuditProblem(since: 1, unstored: 2, error: "e")
        #expect(Set(try #require(agent.typeFields("AuditProblem"))) == (try jsonKeys(problem)))
        let info = AppInfo(
            appId: "a", pid: 1, executable: "/x", managed: true, subscribed: true, compliance: .pending, pendingSeq: 1,
            lastAckSeq: 1, freezeMethod: .cgroup, processState: .frozen, cgroup: "/c", resumesUndone: 1)
        #expect(Set(try #require(agent.typeFields("App"))) == (try jsonKeys(info)))
        // No one event has every member: the samples of every kind together do.
        let eventKeys = try eventWireSamples.reduce(into: Set<String>()) { $0.formUnion(try jsonKeys($1.event)) }
        #expect(Set(try #require(app.typeFields("Event"))) == eventKeys)
        let result = PostureResult(.secureBoot, .fail, "e")
        #expect(Set(try #require(app.typeFields("PostureResult"))) == (try jsonKeys(result)))
    }

    /// Encodable samples of each method's parameters and reply, for comparison with the IDL.
    private func samples(_ method: Method) -> (input: any Encodable, output: any Encodable) {
        let none = NoParameters()
        let decision = CordonDecision(allowed: true, action: .pasteboardCopy, reason: "r", truncateTo: 1, rules: [])
        let policyStatus = PolicyStatus(
            version: "v", appliedAt: 0, sources: [], adminDirectory: "a", userDirectory: "u", trustDirectory: "t",
            trustedKeys: 0)
        let record = AuditEntry(
            id: 1, time: 0, category: "c", appId: "a", action: "x", outcome: "o", reason: "r", rules: [])
        let status = AgentStatus(
            state: .unlocked, seq: 1, failedAttempts: 0, maxAttempts: 10, retryAfterSeconds: 0, idleTimeoutSeconds: 1,
            reauthGraceSeconds: 1, ackDeadlineMs: 1, apps: 0, version: "v", insecureKDF: false,
            lockTriggers: [])
        let token = TokenInfo(
            serial: "s", kind: "totp", nickname: "n", digits: 6, interval: 30, pinMode: "none", expiry: 1,
            importedAt: 0)
        switch method {
        case .service(.getInfo):
            return (none, ServiceInfo(vendor: "v", product: "p", version: "1", url: "u", interfaces: []))
        case .service(.getInterfaceDescription):
            return (InterfaceDescriptionParameters(interface: "i"), InterfaceDescriptionReply(description: "d"))
        case .agent(.getStatus): return (none, StatusReply(status: status))
        case .agent(.initialize): return (InitializeParameters(passcode: "p"), InitializeReply(recoveryKey: "k"))
        case .agent(.unlock): return (UnlockParameters(passcode: "p"), none)
        case .agent(.lock), .agent(.logout), .app(.reportActivity): return (none, none)
        case .agent(.changePasscode): return (ChangePasscodeParameters(old: "o", new: "n"), none)
        case .agent(.wipe): return (WipeParameters(confirm: true, passcode: "p"), none)
        case .agent(.listApps): return (none, ListAppsReply(apps: []))
        case .app(.register):
            return (RegisterParameters(appId: "a", pid: 1), RegisterReply(appId: "a", managed: true, token: "t"))
        case .app(.requestUnlock):
            return (
                RequestUnlockParameters(appId: "a", timeoutSeconds: 1, token: "t"),
                RequestUnlockReply(state: .unlocked, prompted: true)
            )
        case .app(.shareDocument): return (ShareDocumentParameters(path: "/p", contentType: "t", target: "a"), none)
        case .app(.openDocument):
            return (
                OpenDocumentParameters(id: "d", token: "t"),
                OpenDocumentReply(document: DocumentInfo(path: "/p", contentType: "t", sender: "a", id: "d"))
            )
        case .pasteboard(.copy):
            return (
                PasteboardCopyParameters(content: "c", mimeType: "m"),
                PasteboardCopyReply(truncatedTo: 1, decision: decision)
            )
        case .pasteboard(.paste):
            return (
                none,
                PasteboardPasteReply(content: "c", mimeType: "m", source: "s", truncatedTo: 1, decision: decision)
            )
        case .pasteboard(.clear): return (none, none)
        case .app(.subscribe):
            return (
                SubscribeParameters(token: "t"),
                SubscribeReply(event: CordonEvent(seq: 1, payload: .state, reason: .startup, time: 0, state: .unlocked))
            )
        case .app(.acknowledge): return (AcknowledgeParameters(seq: 1, status: .halted), none)
        case .app(.getKey): return (none, GetKeyReply(key: "k"))
        case .app(.check):
            return (
                CheckParameters(action: "a", target: "t", context: ["k": "v"]),
                CheckReply(decision: decision)
            )
        case .policy(.getEffective): return (none, EffectivePolicyReply(version: "v", settings: []))
        case .posture(.get): return (none, PostureReply(checks: [PostureResult(.secureBoot, .unknown, "e")]))
        case .policy(.validate):
            return (ValidateParameters(document: "d", path: "p", user: true), ValidateReply(valid: true, problems: []))
        case .policy(.explain):
            return (
                ExplainParameters(appId: "a", action: "x", target: "t", context: ["k": "v"]),
                ExplainReply(decision: decision, steps: [])
            )
        case .policy(.reload), .policy(.getStatus): return (none, PolicyStatusEnvelope(status: policyStatus))
        case .audit(.query):
            return (AuditQueryParameters(since: 1, appId: "a", limit: 1), AuditQueryReply(records: []))
        case .audit(.follow):
            return (AuditQueryParameters(since: 1, appId: "a", limit: 1), AuditFollowReply(record: record))
        // MARK: Storage (#13)
        case .storage(.put):
            return (StoragePutParameters(namespace: "n", name: "x", value: "dg==", appId: "a", passcode: "p"), none)
        case .storage(.get):
            return (
                StorageRecordParameters(namespace: "n", name: "x", appId: "a", passcode: "p"),
                StorageGetReply(value: "dg==")
            )
        case .storage(.delete):
            return (
                StorageRecordParameters(namespace: "n", name: "x", appId: "a", passcode: "p"),
                StorageDeleteReply(deleted: true)
            )
        case .storage(.list):
            return (
                StorageListParameters(namespace: "n", prefix: "x", appId: "a", passcode: "p"),
                StorageListReply(names: [])
            )
        case .storage(.usage): return (none, StorageUsageReply(apps: []))
        case .storage(.wipeApp): return (StorageWipeAppParameters(appId: "a", passcode: "p"), none)
        case .storage(.exportIdentity):
            return (
                StorageWipeAppParameters(appId: "a", passcode: "p"),
                StorageExportIdentityReply(identity: "AGE-SECRET-KEY-1X", recipient: "age1x")
            )
        // MARK: Tokens (#14)
        case .tokens(.import):
            return (
                TokenImportParameters(
                    data: "otpauth://totp/x?secret=A", password: "w", pin: "1234", nickname: "n", passcode: "p",
                    insecure: true),
                TokenListReply(tokens: [token])
            )
        case .tokens(.list):
            return (
                TokenPasscodeParameters(passcode: "p"),
                TokenListReply(tokens: [token], deviceId: "0123456789abcdef0123456789abcdef")
            )
        case .tokens(.code):
            return (
                TokenCodeParameters(serial: "s", pin: "1234", passcode: "p"),
                TokenCodeReply(serial: "s", code: "123456", next: "654321", secondsLeft: 3, interval: 30)
            )
        case .tokens(.rename): return (TokenRenameParameters(serial: "s", nickname: "n", passcode: "p"), none)
        case .tokens(.remove): return (TokenRemoveParameters(serial: "s", passcode: "p"), none)
        case .tokens(.reset): return (TokenResetParameters(passcode: "p"), none)
        // MARK: Recovery key (#12)
        case .agent(.recover):
            return (RecoverParameters(recoveryKey: "k", passcode: "p"), RecoverReply(recoveryKey: "k"))
        // MARK: Fingerprint unlock (#15)
        case .agent(.unlockWithFingerprint): return (none, none)
        case .agent(.setBiometrics): return (SetBiometricsParameters(enabled: true, passcode: "p"), none)
        // MARK: Posture (#16)
        case .posture(.report):
            return (
                PostureReportParameters(nonce: "n", passcode: "p", token: "t"),
                PostureSignedReport(payload: [1], signature: [2], publicKey: [3])
            )
        case .posture(.getKey): return (none, PostureKeyReply(publicKey: "k", keyId: "i"))
        // MARK: Identity broker (#15)
        case .identity(.getToken):
            return (
                IdentityTokenParameters(domain: "d"),
                IdentityTokenReply(domain: "d", provider: "p", accessToken: "a", tokenType: "Bearer", expiresAt: 1)
            )
        case .identity(.signIn):
            let prompt = IdentityPrompt(
                provider: "p", userCode: "u", verificationURI: "v", verificationURIComplete: "c", expiresAt: 1)
            return (
                IdentityProviderParameters(provider: "p"),
                IdentitySignInReply(provider: "p", prompt: prompt, expiresAt: 1)
            )
        case .identity(.signOut):
            return (
                IdentityProviderParameters(provider: "p"),
                IdentitySignOutReply(providers: [
                    IdentitySignedOut(provider: "p", sessions: 1, revoked: false, revocationProblem: "r")
                ])
            )
        case .identity(.status):
            let session = IdentitySessionStatus(
                domain: "d", user: "u", expiresAt: 1, signedInAt: 1, confirmedAt: 1)
            return (
                none,
                IdentityStatusReply(providers: [
                    IdentityProviderStatus(
                        name: "p", flow: "device", domains: ["d"], signingIn: true, sessions: [session])
                ])
            )
        case .app(.getNetworkPolicy):
            let pin = NetworkPolicy.Pin(hosts: ["h"], pinSha256: ["p"], caCertificates: ["c"], source: "s")
            let client = NetworkPolicy.ClientCertificate(certificate: "/c", key: "/k")
            return (
                GetNetworkPolicyParameters(token: "t"),
                NetworkPolicyReply(
                    policy: NetworkPolicy(
                        pins: [pin], unpinnedHosts: "deny", unpinnedHostsSource: "s", clientCertificate: client))
            )
        case .app(.reportChannelCuts):
            return (
                ReportChannelCutsParameters(cuts: [ChannelCut(host: "h", reason: "r")], token: "t"), none
            )
        }
    }

    @Test(arguments: Method.allCases)
    func parameterAndReplyTypesMatchTheIDL(method: Method) throws {
        let interface = try #require(InterfaceDescriptions.parsed(method.interfaceName))
        let (input, output) = samples(method)
        #expect(Set(try #require(interface.methodInput(method.memberName))) == (try jsonKeys(input)), "parameters")
        #expect(Set(try #require(interface.methodOutput(method.memberName))) == (try jsonKeys(output)), "reply")
    }
}

/// The `{status: Status}` reply of `io.cordon.Policy.Reload` and `GetStatus`.
private struct PolicyStatusEnvelope: Encodable {
    var status: PolicyStatus
}
