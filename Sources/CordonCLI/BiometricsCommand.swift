import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon biometrics on|off`: the user's opt-in to fingerprint unlock (docs/CLI.md).
struct BiometricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "biometrics",
        abstract: "Turn fingerprint unlock (fprintd) on or off.",
        discussion: """
            `on` needs the passcode and the container unlocked, and the policy's passcode.biometrics: allowed. \
            A fingerprint then unlocks (`cordon unlock --fingerprint`) until 48 hours after the last passcode \
            unlock, never the first time after the agent starts nor after `cordon logout`; the passcode always \
            unlocks. `off` needs no passcode and forgets the key kept for fingerprints at once.
            """)

    enum Setting: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Argument(help: "on or off.")
    var setting: Setting

    func run() async throws {
        if setting == .off {
            let client = try await global.connect()
            try await client.setBiometrics(enabled: false)
            await client.close()
            try Output.line("fingerprint unlock off")
            return
        }
        try await passcode.withClient(global) { client, current in
            try await client.setBiometrics(enabled: true, passcode: current)
        }
        try Output.line("fingerprint unlock on (until 48 hours after each passcode unlock)")
    }
}
