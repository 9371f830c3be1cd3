import CordonPolicy
import Testing

@Suite("Merge: scalar settings")
struct MergeScalarTests {
    typealias F = MergeFixtures

    @Test func anEmptyPolicyIsTotalWithTheLoosestValues() {
        let policy = EffectivePolicy.empty
        #expect(policy.base.lock.idleTimeoutSeconds.value == 0)
        #expect(policy.base.lock.reauthGraceSeconds.value == nil)
        #expect(policy.base.lock.ackDeadlineMs.value == nil)
        #expect(policy.base.lock.onAckTimeout.value == .report)
        #expect(policy.base.pasteboard.copyOut.value == .any)
        #expect(policy.base.pasteboard.maxChars.value == nil)
        #expect(policy.base.documents.allowedTargets.value == nil)
        #expect(policy.base.documents.blockedTypes.value.isEmpty)
        #expect(policy.base.conditions.executableMismatch.value == .warn)
        #expect(policy.passcode.minLength.value == 0)
        #expect(policy.passcode.allowSimple.value == true)
        #expect(policy.passcode.maxAttempts.value == nil)
        #expect(policy.apps.unknown.value == .unmanaged)
        #expect(!policy.base.pasteboard.copyOut.isSet)
        #expect(policy.base.pasteboard.copyOut.rules.isEmpty)
    }

    @Test func aSettingNamesTheFileAndPointerThatSetIt() {
        let policy = F.merge((F.pasteboard(.managed), F.admin))
        #expect(policy.base.pasteboard.copyOut.value == .managed)
        #expect(policy.base.pasteboard.copyOut.rules == [F.rule(F.admin, "/pasteboard/copyOut")])
        #expect(policy.base.pasteboard.copyOut.rules.first?.description == "\(F.admin.path)#/pasteboard/copyOut")
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
        #expect(forward.base.pasteboard.copyOut.value == expected)
        #expect(forward == backward)
    }

    @Test func everyOrderedEnumKeepsTheStricterValue() {
        let loose = PolicyDocument(
            apps: AppsSection(unknown: .unmanaged), passcode: PasscodeSection(kind: .numeric, onMaxAttempts: .lockout),
            lock: LockSection(onAckTimeout: .freeze),
            documents: DocumentsSection(sendTo: .managed, receiveFrom: ShareScope.none, saveCopies: .allow),
            storage: StorageSection(dataAccess: .whenUnlocked),
            conditions: ConditionsSection(debuggerAttached: .wipe, preloadInjected: .warn, executableMismatch: .block))
        let strict = PolicyDocument(
            apps: AppsSection(unknown: .refuse), passcode: PasscodeSection(kind: .alphanumeric, onMaxAttempts: .wipe),
            lock: LockSection(onAckTimeout: .disconnect),
            documents: DocumentsSection(sendTo: ShareScope.none, receiveFrom: .any, saveCopies: .block),
            storage: StorageSection(dataAccess: .afterFirstUnlock),
            conditions: ConditionsSection(debuggerAttached: .block, preloadInjected: .block, executableMismatch: .wipe))
        let policy = F.merge((loose, F.admin), (strict, F.team))
        #expect(policy.apps.unknown.value == .refuse)
        #expect(policy.passcode.kind.value == .alphanumeric)
        #expect(policy.passcode.onMaxAttempts.value == .wipe)
        #expect(policy.base.lock.onAckTimeout.value == .freeze)
        #expect(policy.base.lock.onAckTimeout.rules == [F.rule(F.admin, "/lock/onAckTimeout")])
        #expect(policy.base.documents.sendTo.value == .none)
        #expect(policy.base.documents.receiveFrom.value == .none)
        #expect(policy.base.documents.saveCopies.value == .block)
        #expect(policy.base.storage.dataAccess.value == .whenUnlocked)
        #expect(policy.base.conditions.debuggerAttached.value == .wipe)
        #expect(policy.base.conditions.preloadInjected.value == .block)
        #expect(policy.base.conditions.executableMismatch.value == .wipe)
    }

    @Test func aTieNamesEveryDocumentThatSetTheWinningValue() {
        let policy = F.merge(
            (F.pasteboard(.managed), F.team), (F.pasteboard(.any), F.builtin), (F.pasteboard(.managed), F.admin))
        let copyOut = policy.base.pasteboard.copyOut
        #expect(copyOut.value == .managed)
        #expect(copyOut.rules == [F.rule(F.admin, "/pasteboard/copyOut"), F.rule(F.team, "/pasteboard/copyOut")])
        #expect(copyOut.candidates.count == 3)
    }

    @Test func booleansKeepTheStricterValue() {
        let loose = PolicyDocument(
            passcode: PasscodeSection(allowSimple: true),
            lock: LockSection(onScreenLock: false, onSuspend: true, discardKeyOnLock: false),
            pasteboard: PasteboardSection(clearOnLock: false))
        let strict = PolicyDocument(
            passcode: PasscodeSection(allowSimple: false),
            lock: LockSection(onScreenLock: true, onSuspend: false, discardKeyOnLock: true),
            pasteboard: PasteboardSection(clearOnLock: true))
        let policy = F.merge((loose, F.admin), (strict, F.user))
        #expect(policy.passcode.allowSimple.value == false)
        #expect(policy.base.lock.onScreenLock.value == true)
        #expect(policy.base.lock.onSuspend.value == true)
        #expect(policy.base.lock.onSuspend.rules == [F.rule(F.admin, "/lock/onSuspend")])
        #expect(policy.base.lock.discardKeyOnLock.value == true)
        #expect(policy.base.pasteboard.clearOnLock.value == true)
    }

    @Test(arguments: [
        ([300, 0, 600], 300), ([0], 0), ([0, 0], 0), ([0, 45], 45), ([900, 60], 60),
    ])
    func idleTimeoutKeepsTheSmallestPositiveValue(values: [Int], expected: Int) {
        let documents = values.enumerated().map { index, seconds in
            (
                PolicyDocument(lock: LockSection(idleTimeoutSeconds: seconds)),
                PolicySource(path: "/p/\(index).json", origin: .admin)
            )
        }
        let setting = EffectivePolicy.merge(documents).base.lock.idleTimeoutSeconds
        #expect(setting.value == expected)
        #expect(setting.rules.count == values.filter { $0 == expected }.count)
    }

    @Test func boundsKeepTheSmallestAndMinLengthTheLargest() {
        let first = PolicyDocument(
            passcode: PasscodeSection(minLength: 6, maxAttempts: 10),
            lock: LockSection(reauthGraceSeconds: 30, ackDeadlineMs: 2000),
            pasteboard: PasteboardSection(maxChars: 500))
        let second = PolicyDocument(
            passcode: PasscodeSection(minLength: 8, maxAttempts: 5),
            lock: LockSection(reauthGraceSeconds: 120, ackDeadlineMs: 500),
            pasteboard: PasteboardSection(maxChars: 1000))
        let policy = F.merge((first, F.admin), (second, F.team))
        #expect(policy.passcode.minLength.value == 8)
        #expect(policy.passcode.minLength.rules == [F.rule(F.team, "/passcode/minLength")])
        #expect(policy.passcode.maxAttempts.value == 5)
        #expect(policy.base.lock.reauthGraceSeconds.value == 30)
        #expect(policy.base.lock.ackDeadlineMs.value == 500)
        #expect(policy.base.pasteboard.maxChars.value == 500)
        #expect(policy.base.pasteboard.maxChars.rules == [F.rule(F.admin, "/pasteboard/maxChars")])
    }

    @Test func theDefaultDocumentResolvesEverySetting() {
        let policy = F.merge((F.defaults, F.builtin))
        let shown = policy.describeEffective()
        let unsetPaths = shown.filter { $0.rules.isEmpty }.map(\.path)
        #expect(unsetPaths == ["/documents/allowedTargets", "/documents/allowedSources", "/documents/saveLocations"])
        #expect(policy.base.lock.idleTimeoutSeconds.value == 300)
        #expect(policy.passcode.onMaxAttempts.value == .wipe)
    }
}
