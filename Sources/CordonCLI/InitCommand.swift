import ArgumentParser
import CordonKit
import CordonPrompt
import CordonProtocol

/// `cordon init`: sets the first passcode and prints the recovery key; `--recovery` restores with it.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Set the first passcode (asked twice: through pinentry, or on the terminal without echo).",
        discussion: """
            The container stays locked until `cordon unlock`. The recovery key is printed once: keep it \
            offline. With --recovery, the recovery key restores the container where the TPM no longer opens \
            it (cleared, replaced, another machine): a new passcode is set, the key re-sealed, and a new \
            recovery key printed (the old one stops working). The recovery key is asked for like a \
            passcode, or read from the first line of stdin with --recovery-stdin; never from the command line.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Flag(help: "Restore with the recovery key printed at init and set a new passcode.")
    var recovery = false

    @Flag(help: "With --recovery: read the recovery key from the first line of standard input.")
    var recoveryStdin = false

    func validate() throws {
        if recoveryStdin && !recovery { throw ValidationError("--recovery-stdin needs --recovery") }
    }

    func run() async throws {
        let reader = passcode.reader()
        defer { reader.finish() }
        try reader.checkAvailable()
        let keyReader =
            recoveryStdin ? PasscodeReader(fromStandardInput: true) : reader
        let client = try await global.connect()
        let status = try await client.status()
        let state = status.state
        if recovery {
            if state == .uninitialized { throw CordonError.notInitialized }
            if let warning = Self.lastAttemptWarning(status) { Output.note(warning) }
            let key = try keyReader.read(.recoveryKey)
            let secret = try reader.readNew(.new, repeat: .repeated)
            reader.finish()
            let next = try await client.recover(recoveryKey: key, passcode: secret)
            await client.close()
            try Output.line("restored with the recovery key; the new passcode is set and the key re-sealed")
            try Self.printRecoveryKey(next, new: true)
            try Output.line("the container is locked: run `cordon unlock`")
            return
        }
        // Fail before asking for a passcode that could not be used.
        if state != .uninitialized { throw CordonError.alreadyInitialized }
        let secret = try reader.readNew(.new, repeat: .repeated)
        reader.finish()
        let recoveryKey = try await client.initialize(passcode: secret)
        await client.close()
        try Output.line("initialized; the container is locked: run `cordon unlock`")
        if let recoveryKey { try Self.printRecoveryKey(recoveryKey, new: false) }
    }

    /// Said before a recovery key is asked for when a wrong one would apply the max-attempts action:
    /// nothing is erased without saying so first.
    static func lastAttemptWarning(_ status: AgentStatus) -> String? {
        guard status.maxAttempts - status.failedAttempts <= 1 else { return nil }
        switch status.onMaxAttempts {
        case "wipe":
            return "this is the last attempt (passcode.maxAttempts): a wrong recovery key erases the container "
                + "and its data (passcode.onMaxAttempts: wipe)"
        case "lockout":
            return "this is the last attempt (passcode.maxAttempts): a wrong recovery key locks cordond out "
                + "(passcode.onMaxAttempts: lockout)"
        default:
            return "this is the last attempt (passcode.maxAttempts): a wrong recovery key applies the "
                + "max-attempts action (lockout or wipe)"
        }
    }

    /// Prints the recovery key with what to do with it (stdout only: never logged).
    static func printRecoveryKey(_ key: String, new: Bool) throws {
        try Output.line("")
        try Output.line(new ? "Your NEW recovery key (the previous one no longer works):" : "Your recovery key:")
        try Output.line("")
        try Output.line("    \(key)")
        try Output.line("")
        try Output.line(
            "Keep it offline (printed or written down, not on this computer). It is shown only now. It restores "
                + "the container with `cordon init --recovery` if the TPM is cleared or replaced or the data moves "
                + "to another machine.")
    }
}

extension PasscodeRequest {
    /// The recovery key, for `init --recovery`.
    static let recoveryKey = PasscodeRequest(
        prompt: "Recovery key: ",
        description: "Enter the 48-digit recovery key printed at `cordon init` (8 groups of 6 digits).")
}
