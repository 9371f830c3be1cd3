import CordonKit
import CordonProtocol
import Testing

/// The harness's explicit switch for the stronger software-only passcode defaults (no TPM here):
/// on, as cordond always runs, a short passcode is refused naming the rule; off (the tests' short
/// passcodes), it is accepted.
struct SoftwareOnlyPasscodeAgentTests {
    @Test func withTheDefaultsOnAShortPasscodeIsRefusedNamingTheRule() async throws {
        try await withTestAgent(shortPasscodes: false) { agent in
            let client = try await agent.client()
            await #expect(
                throws: CordonError.invalidPasscode(
                    reason: "the passcode must have at least 6 characters (no TPM protects the key)")
            ) { try await client.initialize(passcode: "1357") }
            #expect(try await client.status().state == .uninitialized)
            try await client.initialize(passcode: "1357-9bx")
            #expect(try await client.status().state == .lockedNoKey)
            await client.close()
        }
    }

    @Test func withTheHarnessSwitchTheShortPasscodeIsAccepted() async throws {
        try await withTestAgent(shortPasscodes: true) { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1357")
            #expect(try await client.status().state == .lockedNoKey)
            await client.close()
        }
    }
}
