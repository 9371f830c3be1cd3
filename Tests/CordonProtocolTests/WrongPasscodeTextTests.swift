import Testing

@testable import CordonProtocol

/// What a wrong passcode tells the user (issue #27, case 6): the tighter limit and which one it
/// is, and, at the last attempt, what the max-attempts action did.
@Suite("WrongPasscode: the message")
struct WrongPasscodeTextTests {
    @Test func theOptionalParametersAreLeftOutWhenNil() {
        let plain = CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0)
        #expect(Set(plain.varlinkParameters.keys) == ["attemptsLeft", "retryAfterSeconds"])
        #expect(CordonError(plain.varlinkError) == plain)
        let idl = ErrorDeclarations.byName["io.cordon.Agent.WrongPasscode"]?.idl ?? ""
        #expect(idl.contains("maxAttemptsLeft: ?int, hardwareAttemptsLeft: ?int, maxAttemptsAction: ?string"))
    }

    @Test func cordondsLimit() {
        let text = CordonError.wrongPasscode(attemptsLeft: 9, retryAfterSeconds: 0).text
        #expect(text.message == "wrong passcode; 9 attempts left before the max-attempts action")
    }

    @Test func theTPMsTighterLimitIsNamed() {
        let error = CordonError.wrongPasscode(
            attemptsLeft: 3, retryAfterSeconds: 0, maxAttemptsLeft: 9, hardwareAttemptsLeft: 3)
        #expect(
            error.text.message
                == "wrong passcode; 3 attempts left before the TPM locks out (9 before the max-attempts action)")
        let lockedOut = CordonError.wrongPasscode(
            attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsLeft: 7, hardwareAttemptsLeft: 0)
        #expect(lockedOut.text.message.contains("the TPM is now in dictionary-attack lockout (7 attempts left"))
    }

    @Test func aWipeSaysTheDataIsGone() {
        let text = CordonError.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0, maxAttemptsAction: "wipe").text
        #expect(text.message.contains("the container was erased"))
        #expect(text.message.contains("its data is gone"))
        #expect(text.hint == "start again with `cordon init`")
    }

    @Test func aLockoutSaysSo() {
        let text = CordonError.wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 300, maxAttemptsAction: "lockout")
            .text
        #expect(text.message.contains("cordond is locked out"))
        #expect(text.hint == "wait 5 min, then try again" || text.hint.hasPrefix("wait "))
    }
}
