import CordonLifecycle
import CordonPolicy
import Testing

@testable import CordonServer

/// The lifecycle settings the agent starts with are the built-in policy's, declared once.
@Suite struct BuiltinLifecycleTests {
    @Test func theAgentStartsWithTheBuiltInPolicysValues() {
        let configuration = LifecycleConfiguration.builtin
        #expect(configuration.idleTimeoutSeconds == 300)
        #expect(configuration.reauthGraceSeconds == 60)
        #expect(configuration.discardKeyOnLock == false)
        #expect(configuration.maxAttempts == 10)
        #expect(configuration.ackDeadlineMs == 2000)
        #expect(configuration.minPasscodeLength == 4)
        #expect(configuration.onMaxAttempts == .wipe)
        #expect(configuration.backoff == Backoff())
    }

    @Test func theyFollowTheDeclarations() {
        let policy = EffectivePolicy(document: BuiltinPolicy.document, source: BuiltinPolicy.source)
        let configuration = LifecycleConfiguration.builtin
        #expect(configuration.idleTimeoutSeconds == policy[PolicyKeys.Lock.idleTimeoutSeconds].value)
        #expect(configuration.reauthGraceSeconds == policy[PolicyKeys.Lock.reauthGraceSeconds].value)
        #expect(configuration.maxAttempts == policy[PolicyKeys.Passcode.maxAttempts].value)
        #expect(configuration.ackDeadlineMs == policy[PolicyKeys.Lock.ackDeadlineMs].value)
    }
}
