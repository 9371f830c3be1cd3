import Foundation
import Testing

@testable import CordonPolicy

@Suite("Policy parser: invalid fixtures and shipped policies")
struct ParserFixtureTests {
    typealias Support = ParserTestSupport

    static let fixtureNames: [String] = (try? Support.invalidFixtureNames()) ?? []

    @Test func thereAreEnoughFixtures() {
        #expect(Self.fixtureNames.count >= 15)
    }

    /// Each `fixtures/invalid/NAME.json` gives exactly the diagnostics listed in `NAME.expected`.
    @Test(arguments: fixtureNames)
    func fixtureGivesItsExpectedMessages(_ name: String) throws {
        let directory = Support.invalidFixturesDirectory
        let bytes = try Support.bytes(of: directory.appendingPathComponent(name + ".json"))
        let expectedText = try String(contentsOf: directory.appendingPathComponent(name + ".expected"), encoding: .utf8)
        let expected = expectedText.split(separator: "\n").map(String.init)
        let source = PolicySource(path: "fixtures/invalid/\(name).json", origin: .admin)
        switch PolicyParser.parse(bytes, source: source) {
        case .success:
            Issue.record("\(name).json parsed without diagnostics")
        case .failure(let failure):
            #expect(failure.diagnostics.map(\.description) == expected)
            #expect(failure.diagnostics.allSatisfy { $0.line != nil && $0.column != nil })
        }
    }

    @Test func everyShippedPolicyIsValid() throws {
        let files = try Support.policyFiles()
        #expect(
            files.map(\.lastPathComponent).sorted() == [
                "corporate-baseline.json", "default.json", "developer-lenient.json", "pinned-network.json",
                "strict.json",
            ])
        for file in files {
            let source = PolicySource(path: file.path, origin: .admin)
            if case .failure(let failure) = PolicyParser.parse(try Support.bytes(of: file), source: source) {
                Issue.record("\(file.lastPathComponent):\n\(failure)")
            }
        }
    }

    @Test func theEmbeddedDefaultIsTheFileOnDiskByteForByte() throws {
        let onDisk = try Support.bytes(of: Support.policiesDirectory.appendingPathComponent("default.json"))
        #expect(Array(BuiltinPolicy.json.utf8) == onDisk)
    }

    @Test func theEmbeddedDefaultParses() {
        #expect(BuiltinPolicy.source == PolicySource(path: "<builtin>", origin: .builtin))
        #expect(BuiltinPolicy.document.schema == PolicyDocument.schemaIdentifier)
        if case .failure(let failure) = PolicyParser.parse(BuiltinPolicy.json, source: BuiltinPolicy.source) {
            Issue.record("\(failure)")
        }
    }

    /// Every key of every section has a value, so the merged effective policy always has one.
    /// Allow-lists are the exception: absent means "no allow-list", the loosest setting.
    @Test func theDefaultSetsEveryKey() throws {
        let json = try #require(Support.json(BuiltinPolicy.json))
        // The identity offline limits likewise: absent means no limit.
        let allowLists: Set = [
            "allowedTargets", "allowedSources", "saveLocations", "importKinds", "codeReaders", "offlineGraceMinutes",
            "offlineWipeDays", "clientCertificate",
        ]
        for (section, keys) in PolicyParser.Rules.sectionKeys {
            for key in keys where !allowLists.contains(key) {
                #expect(json[section]?[key] != nil, "default.json lacks \(section).\(key)")
            }
            for key in allowLists { #expect(json[section]?[key] == nil, "default.json sets the allow-list \(key)") }
        }
        #expect(json["apps"]?["managed"]?.value == .array([]))
        #expect(json["overrides"]?.value == .array([]))
    }

    /// The default matches the agent's behaviour, loosest sensible values elsewhere.
    @Test func theDefaultIsTheAgreedBaseline() {
        typealias K = PolicyKeys
        let document = BuiltinPolicy.document
        let expected = PolicySettingValues([
            K.Apps.managed([]), K.Apps.unknown(.unmanaged),
            K.Passcode.minLength(4), K.Passcode.kind(.numeric), K.Passcode.allowSimple(true),
            K.Passcode.maxAttempts(10), K.Passcode.onMaxAttempts(.wipe), K.Passcode.hardware(.preferred),
            K.Passcode.pcrs(PCRSelection([])),
            K.Passcode.biometrics(.disabled),
            K.Lock.idleTimeoutSeconds(300), K.Lock.onScreenLock(true), K.Lock.onSuspend(true),
            K.Lock.onSessionIdle(true),
            K.Lock.reauthGraceSeconds(60), K.Lock.discardKeyOnLock(false), K.Lock.ackDeadlineMs(2000),
            K.Lock.onAckTimeout(.report),
            K.Pasteboard.copyOut(.any), K.Pasteboard.maxChars(10_000_000), K.Pasteboard.clearOnLock(false),
            K.Documents.sendTo(.any), K.Documents.receiveFrom(.any), K.Documents.saveCopies(.allow),
            K.Documents.blockedTypes([]),
            K.Storage.dataAccess(.afterFirstUnlock), K.Storage.wipeOnAckTimeout(false),
            K.Conditions.debuggerAttached(.warn), K.Conditions.preloadInjected(.warn),
            K.Conditions.executableMismatch(.warn),
            K.Conditions.secureBoot(.ignore), K.Conditions.kernelLockdown(.ignore),
            K.Conditions.diskEncryption(.ignore), K.Conditions.screenLock(.ignore), K.Conditions.kernelTaint(.ignore),
            K.Conditions.ptraceScope(.ignore), K.Conditions.osVersion(.ignore), K.Conditions.kernelVersion(.ignore),
            K.Conditions.postureUnknown(.fail), K.Conditions.minimumVersions([]), K.Conditions.policyStale(.off),
            K.Tokens.pinRequired(false), K.Tokens.maxTokens(10), K.Tokens.cliReadsCodes(true),
            K.Tokens.dataAccess(.whenUnlocked), K.Tokens.ctkipAllowInsecure(false),
            K.Identity.providers([]), K.Identity.cpaProviders([]), K.Identity.domains([]), K.Identity.accessGroups([]),
            K.Network.pins([]), K.Network.unpinnedHosts(.systemTrust), K.Network.onLock(.refuseNew),
        ])
        #expect(document.settings == expected)
        #expect(document.overrides.isEmpty)
        let parsed = try? PolicyParser.parse(BuiltinPolicy.json, source: BuiltinPolicy.source).get()
        #expect(parsed == document, "the text and the document say the same")
    }

    @Test func aUserCannotShipTheCorporateBaseline() throws {
        let file = Support.policiesDirectory.appendingPathComponent("examples/corporate-baseline.json")
        let result = PolicyParser.parse(
            try Support.bytes(of: file), source: PolicySource(path: "user.json", origin: .user))
        guard case .failure(let failure) = result else {
            Issue.record("a user file with apps.managed was accepted")
            return
        }
        #expect(failure.diagnostics.map(\.pointer) == ["/apps/managed"])
    }
}
