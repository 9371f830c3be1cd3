import CordonProtocol
import CordonTPM
import Testing

@testable import CordonServer

/// Which TPM failures give an attempt back (issue #27, case 6): only those the TPM answers before
/// it evaluates the passcode. A refused check must never be a free guess.
@Suite struct KeySealingFailureTests {
    static func failure(_ error: TPMError) -> KeySealing.Failure {
        KeySealing.failure(error, pcrs: [7], tpm: { nil })
    }

    @Test func aRejectedAuthorizationIsAWrongPasscode() {
        guard case .wrongPasscode = Self.failure(.authorizationFailed) else {
            Issue.record("the TPM evaluated the passcode: it must count")
            return
        }
    }

    @Test(arguments: [
        TPMError.policyMismatch, .lockedOut, .unavailable("no TPM"), .objectRejected("integrity"),
    ])
    func refusalsBeforeTheEvaluationAreNotCounted(error: TPMError) {
        guard case .notEvaluated = Self.failure(error) else {
            Issue.record("\(error) is refused before the passcode is evaluated")
            return
        }
    }

    @Test func anyOtherFailureKeepsTheAttemptCounted() {
        guard case .refused = Self.failure(.failed(code: 0x101, "TPM_RC_FAILURE")) else {
            Issue.record("an unexpected failure gives no attempt back")
            return
        }
    }

    @Test func aPCRChangeNamesTheBoundPCRsAndTheRecoveryPath() {
        guard case .notEvaluated(.hardwareKeyRejected(let reason)) = Self.failure(.policyMismatch) else {
            Issue.record("expected HardwareKeyRejected")
            return
        }
        #expect(reason.contains("the PCRs the key is bound to (7) have changed since it was sealed"))
        #expect(reason.contains("`cordon init --recovery`"))
    }
}
