import Testing

@testable import CordonPolicy

/// A user file can only tighten: it merges against the admin files and the built-in default alike,
/// so with no admin file at all it still cannot loosen what the default says (the attack of
/// docs/THREAT-MODEL.md: a user file setting idle timeout 0, a day of grace, no screen-lock or
/// suspend trigger and 100 attempts with lockout).
@Suite struct UserTighteningTests {
    typealias K = PolicyKeys
    static let user = PolicySource(path: "/home/ada/.config/cordon/policy.d/loose.json", origin: .user)
    static let admin = PolicySource(path: "/etc/cordon/policy.d/10-base.json", origin: .admin)

    static let loosening = PolicyDocument(
        K.Lock.idleTimeoutSeconds(0), K.Lock.reauthGraceSeconds(86_400), K.Lock.onScreenLock(false),
        K.Lock.onSuspend(false), K.Passcode.maxAttempts(100), K.Passcode.onMaxAttempts(.lockout),
        K.Pasteboard.copyOut(.any))

    static func effective(_ documents: [(PolicyDocument, PolicySource)]) -> EffectivePolicy {
        EffectivePolicy.merge(documents, fallback: (BuiltinPolicy.document, BuiltinPolicy.source))
    }

    @Test func aUserFileCannotLoosenTheDefault() {
        let policy = Self.effective([(Self.loosening, Self.user)])
        #expect(policy[K.Lock.idleTimeoutSeconds].value == 300)
        #expect(policy[K.Lock.reauthGraceSeconds].value == 60)
        #expect(policy[K.Lock.onScreenLock].value == true)
        #expect(policy[K.Lock.onSuspend].value == true)
        #expect(policy[K.Passcode.maxAttempts].value == 10)
        #expect(policy[K.Passcode.onMaxAttempts].value == .wipe)
        #expect(policy[K.Lock.idleTimeoutSeconds].rules.map(\.source) == [BuiltinPolicy.source])
    }

    @Test func anAdminFileMayLoosenTheDefaultAndTheUserStillOnlyTightens() {
        let admin = PolicyDocument(K.Lock.idleTimeoutSeconds(900), K.Passcode.onMaxAttempts(.lockout))
        let loose = Self.effective([(admin, Self.admin), (Self.loosening, Self.user)])
        #expect(loose[K.Lock.idleTimeoutSeconds].value == 900)
        #expect(loose[K.Passcode.onMaxAttempts].value == .lockout)
        let tighter = PolicyDocument(K.Lock.idleTimeoutSeconds(120), K.Pasteboard.copyOut(.blocked))
        let tight = Self.effective([(admin, Self.admin), (tighter, Self.user)])
        #expect(tight[K.Lock.idleTimeoutSeconds].value == 120)
        #expect(tight[K.Pasteboard.copyOut].value == .blocked)
        #expect(tight[K.Lock.idleTimeoutSeconds].rules.map(\.source) == [Self.user])
    }

    @Test func theOrderOfTheFilesDoesNotMatter() {
        let admin = PolicyDocument(K.Lock.idleTimeoutSeconds(900))
        let forward = Self.effective([(admin, Self.admin), (Self.loosening, Self.user)])
        let backward = Self.effective([(Self.loosening, Self.user), (admin, Self.admin)])
        #expect(forward == backward)
    }
}
