import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon posture`: the device's posture as the agent reads it.
struct PostureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "posture",
        abstract: "Show the device's posture: each check, pass, fail or unknown, with its evidence.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the checks as a JSON array (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let checks = try await client.posture()
        await client.close()
        if json {
            try Output.line(try Output.json(checks))
            return
        }
        let rows = checks.map { [$0.check.rawValue, $0.status.rawValue, $0.evidence] }
        for line in Format.table([["CHECK", "STATUS", "EVIDENCE"]] + rows) { try Output.line(line) }
    }
}

extension DoctorCheck {
    /// A posture check as a doctor line: a pass is ok, a fail or an unknown a warning (what the
    /// policy makes of it decides whether apps run).
    static func posture(_ result: PostureResult) -> DoctorCheck {
        let text = "posture \(result.check.rawValue): \(result.status.rawValue) (\(result.evidence))"
        switch result.status {
        case .pass: return DoctorCheck(outcome: .ok, text: text)
        case .fail, .unknown: return DoctorCheck(outcome: .warn, text: text, hint: PostureCommand.hints[result.check])
        }
    }
}

extension PostureCommand {
    /// What a user can do about each check.
    static let hints: [PostureCheck: String] = [
        .secureBoot: "enable Secure Boot in the firmware settings",
        .kernelLockdown: "boot with lockdown=integrity (Secure Boot enables it on many distributions)",
        .diskEncryption: "install on an encrypted disk (LUKS)",
        .screenLock: "turn on the screen lock in the desktop's privacy settings",
        .kernelTaint: "remove out-of-tree, unsigned or proprietary modules and reboot",
        .ptraceScope: "set kernel.yama.ptrace_scope=1 (sysctl)",
        .osVersion: "upgrade the operating system",
        .kernelVersion: "upgrade the kernel",
    ]
}
