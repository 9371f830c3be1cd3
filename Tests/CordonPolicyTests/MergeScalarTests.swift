import CordonPolicy
import Testing

@Suite("Merge: scalar settings")
struct MergeScalarTests {
    typealias F = MergeFixtures

    @Test func anEmptyPolicyIsTotalWithTheLoosestValues() {
        let policy = EffectivePolicy.empty
        #expect(policy.base[PolicyKeys.Lock.idleTimeoutSeconds].value == 0)
        #expect(policy.base[PolicyKeys.Lock.reauthGraceSeconds].value == nil)
        #expect(policy.base[PolicyKeys.Lock.ackDeadlineMs].value == nil)
        #expect(policy.base[PolicyKeys.Lock.onAckTimeout].value == .report)
        #expect(policy.base[PolicyKeys.Pasteboard.copyOut].value == .any)
        #expect(policy.base[PolicyKeys.Pasteboard.maxChars].value == nil)
        #expect(policy.base[PolicyKeys.Documents.allowedTargets].value == nil)
        #expect(policy.base[PolicyKeys.Documents.blockedTypes].value.isEmpty)
        #expect(policy.base[PolicyKeys.Conditions.executableMismatch].value == .warn)
        #expect(policy[PolicyKeys.Passcode.minLength].value == 0)
        #expect(policy[PolicyKeys.Passcode.allowSimple].value == true)
        #expect(policy[PolicyKeys.Passcode.maxAttempts].value == nil)
        #expect(policy[PolicyKeys.Apps.unknown].value == .trusted)
        #expect(!policy.base[PolicyKeys.Pasteboard.copyOut].isSet)
        #expect(policy.base[PolicyKeys.Pasteboard.copyOut].rules.isEmpty)
    }

    @Test func aSettingNamesTheFileAndPointerThatSetIt() {
        let policy = F.merge((F.pasteboard(.managed), F.admin))
        #expect(policy.base[PolicyKeys.Pasteboard.copyOut].value == .managed)
        #expect(policy.base[PolicyKeys.Pasteboard.copyOut].rules == [F.rule(F.admin, "/pasteboard/copyOut")])
        #expect(
            policy.base[PolicyKeys.Pasteboard.copyOut].rules.first?.description == "\(F.admin.path)#/pasteboard/copyOut"
        )
    }

    @Test(arguments: [
        (PasteboardLevel.any, PasteboardLevel.managedWithPasteIn, PasteboardLevel.managedWithPasteIn),
        (.managedWithPasteIn, .managed, .managed),
        (.blocked, .managed, .blocked),
        (.any, .blocked, .blocked),
    ])
    func copyOutTakesTheHighestStrictness(lhs: PasteboardLevel, rhs: PasteboardLevel, expected: PasteboardLevel) {
        let forward = F.merge((F.pasteboard(lhs), F.admin), (F.pasteboard(rhs), F.user))
        let backward = F.merge((F.pasteboard(rhs), F.user), (F.pasteboard(lhs), F.admin))
        #expect(forward.base[PolicyKeys.Pasteboard.copyOut].value == expected)
        #expect(forward == backward)
    }

    @Test func everyOrderedEnumKeepsTheStricterValue() {
        let loose = PolicyDocument(
            PolicyKeys.Apps.unknown(.unmanaged), PolicyKeys.Passcode.kind(.numeric),
            PolicyKeys.Passcode.onMaxAttempts(.lockout),
            PolicyKeys.Lock.onAckTimeout(.freeze),
            PolicyKeys.Documents.sendTo(.managed), PolicyKeys.Documents.receiveFrom(ShareScope.none),
            PolicyKeys.Documents.saveCopies(.allow),
            PolicyKeys.Storage.dataAccess(.whenUnlocked),
            PolicyKeys.Conditions.debuggerAttached(.wipe), PolicyKeys.Conditions.preloadInjected(.warn),
            PolicyKeys.Conditions.executableMismatch(.block))
        let strict = PolicyDocument(
            PolicyKeys.Apps.unknown(.refuse), PolicyKeys.Passcode.kind(.alphanumeric),
            PolicyKeys.Passcode.onMaxAttempts(.wipe),
            PolicyKeys.Lock.onAckTimeout(.disconnect),
            PolicyKeys.Documents.sendTo(ShareScope.none), PolicyKeys.Documents.receiveFrom(.any),
            PolicyKeys.Documents.saveCopies(.block),
            PolicyKeys.Storage.dataAccess(.afterFirstUnlock),
            PolicyKeys.Conditions.debuggerAttached(.block), PolicyKeys.Conditions.preloadInjected(.block),
            PolicyKeys.Conditions.executableMismatch(.wipe))
        let policy = F.merge((loose, F.admin), (strict, F.team))
        #expect(policy[PolicyKeys.Apps.unknown].value == .refuse)
        #expect(policy[PolicyKeys.Passcode.kind].value == .alphanumeric)
        #expect(policy[PolicyKeys.Passcode.onMaxAttempts].value == .wipe)
        #expect(policy.base[PolicyKeys.Lock.onAckTimeout].value == .freeze)
        #expect(policy.base[PolicyKeys.Lock.onAckTimeout].rules == [F.rule(F.admin, "/lock/onAckTimeout")])
        #expect(policy.base[PolicyKeys.Documents.sendTo].value == .none)
        #expect(policy.base[PolicyKeys.Documents.receiveFrom].value == .none)
        #expect(policy.base[PolicyKeys.Documents.saveCopies].value == .block)
        #expect(policy.base[PolicyKeys.Storage.dataAccess].value == .whenUnlocked)
        #expect(policy.base[PolicyKeys.Conditions.debuggerAttached].value == .wipe)
        #expect(policy.base[PolicyKeys.Conditions.preloadInjected].value == .block)
        #expect(policy.base[PolicyKeys.Conditions.executableMismatch].value == .wipe)
    }

    @Test func aTieNamesEveryDocumentThatSetTheWinningValue() {
        let policy = F.merge(
            (F.pasteboard(.managed), F.team), (F.pasteboard(.any), F.builtin), (F.pasteboard(.managed), F.admin))
        let copyOut = policy.base[PolicyKeys.Pasteboard.copyOut]
        #expect(copyOut.value == .managed)
        #expect(copyOut.rules == [F.rule(F.admin, "/pasteboard/copyOut"), F.rule(F.team, "/pasteboard/copyOut")])
        #expect(copyOut.candidates.count == 3)
    }

    @Test func booleansKeepTheStricterValue() {
        let loose = PolicyDocument(
            PolicyKeys.Passcode.allowSimple(true),
            PolicyKeys.Lock.onScreenLock(false), PolicyKeys.Lock.onSuspend(true),
            PolicyKeys.Lock.discardKeyOnLock(false),
            PolicyKeys.Pasteboard.clearOnLock(false))
        let strict = PolicyDocument(
            PolicyKeys.Passcode.allowSimple(false),
            PolicyKeys.Lock.onScreenLock(true), PolicyKeys.Lock.onSuspend(false),
            PolicyKeys.Lock.discardKeyOnLock(true),
            PolicyKeys.Pasteboard.clearOnLock(true))
        let policy = F.merge((loose, F.admin), (strict, F.user))
        #expect(policy[PolicyKeys.Passcode.allowSimple].value == false)
        #expect(policy.base[PolicyKeys.Lock.onScreenLock].value == true)
        #expect(policy.base[PolicyKeys.Lock.onSuspend].value == true)
        #expect(policy.base[PolicyKeys.Lock.onSuspend].rules == [F.rule(F.admin, "/lock/onSuspend")])
        #expect(policy.base[PolicyKeys.Lock.discardKeyOnLock].value == true)
        #expect(policy.base[PolicyKeys.Pasteboard.clearOnLock].value == true)
    }

    @Test(arguments: [
        ([300, 0, 600], 300), ([0], 0), ([0, 0], 0), ([0, 45], 45), ([900, 60], 60),
    ])
    func idleTimeoutKeepsTheSmallestPositiveValue(values: [Int], expected: Int) {
        let documents = values.enumerated().map { index, seconds in
            (
                PolicyDocument(PolicyKeys.Lock.idleTimeoutSeconds(seconds)),
                PolicySource(path: "/p/\(index).json", origin: .admin)
            )
        }
        let setting = EffectivePolicy.merge(documents).base[PolicyKeys.Lock.idleTimeoutSeconds]
        #expect(setting.value == expected)
        #expect(setting.rules.count == values.filter { $0 == expected }.count)
    }

    @Test func boundsKeepTheSmallestAndMinLengthTheLargest() {
        let first = PolicyDocument(
            PolicyKeys.Passcode.minLength(6), PolicyKeys.Passcode.maxAttempts(10),
            PolicyKeys.Lock.reauthGraceSeconds(30), PolicyKeys.Lock.ackDeadlineMs(2000),
            PolicyKeys.Pasteboard.maxChars(500))
        let second = PolicyDocument(
            PolicyKeys.Passcode.minLength(8), PolicyKeys.Passcode.maxAttempts(5),
            PolicyKeys.Lock.reauthGraceSeconds(120), PolicyKeys.Lock.ackDeadlineMs(500),
            PolicyKeys.Pasteboard.maxChars(1000))
        let policy = F.merge((first, F.admin), (second, F.team))
        #expect(policy[PolicyKeys.Passcode.minLength].value == 8)
        #expect(policy[PolicyKeys.Passcode.minLength].rules == [F.rule(F.team, "/passcode/minLength")])
        #expect(policy[PolicyKeys.Passcode.maxAttempts].value == 5)
        #expect(policy.base[PolicyKeys.Lock.reauthGraceSeconds].value == 30)
        #expect(policy.base[PolicyKeys.Lock.ackDeadlineMs].value == 500)
        #expect(policy.base[PolicyKeys.Pasteboard.maxChars].value == 500)
        #expect(policy.base[PolicyKeys.Pasteboard.maxChars].rules == [F.rule(F.admin, "/pasteboard/maxChars")])
    }

    @Test func theDefaultDocumentResolvesEverySetting() {
        let policy = F.merge((F.defaults, F.builtin))
        let shown = policy.describeEffective()
        let unsetPaths = shown.filter { $0.rules.isEmpty }.map(\.path)
        #expect(
            unsetPaths == [
                "/documents/allowedTargets", "/documents/allowedSources", "/documents/saveLocations",
                "/tokens/importKinds",
                "/tokens/codeReaders",
                "/identity/offlineGraceMinutes", "/identity/offlineWipeDays", "/network/clientCertificate",
            ])
        #expect(policy.base[PolicyKeys.Lock.idleTimeoutSeconds].value == 300)
        #expect(policy[PolicyKeys.Passcode.onMaxAttempts].value == .wipe)
    }
}
