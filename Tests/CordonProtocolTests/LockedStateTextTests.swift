import Testing

@testable import CordonProtocol

/// Issue #32, item 4: every CLI sentence names the container's state as a user sees it
/// (`locked`), never the protocol's `lockedKeyHeld` or `lockedNoKey`, with a hint that is true
/// for it (a container not set up needs `cordon init`, not an unlock).
@Suite struct LockedStateTextTests {
    @Test func identityStorageTokensAndKeysSayLocked() {
        for state in ["lockedKeyHeld", "lockedNoKey"] {
            #expect(
                CordonError.identityLocked(state: state).text
                    == ErrorText(
                        "no sign-in and no token while the container is locked", hint: ErrorText.unlockHint,
                        exit: .locked))
            #expect(
                CordonError.containerLocked(appId: "com.example.notes", state: state).text.message
                    == "the storage of com.example.notes is closed: the container is locked")
            #expect(
                CordonError.keyUnavailable(state: state).text.message == "no key is available: the container is locked")
        }
    }

    @Test func aContainerNotSetUpIsSaidSoWithItsHint() {
        let text = CordonError.identityLocked(state: "uninitialized").text
        #expect(text.message == "no sign-in and no token while the container is not set up")
        #expect(text.hint == "set a passcode first: `cordon init`")
        #expect(LifecycleState.allCases.map(\.userName) == ["not set up", "locked", "unlocked", "locked"])
    }
}
