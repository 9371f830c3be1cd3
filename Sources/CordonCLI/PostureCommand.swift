import ArgumentParser
import CordonKit
import CordonProtocol
import CordonTrust
import Foundation

/// `cordon posture`: the device's posture as the agent reads it, and signed reports of it.
struct PostureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "posture",
        abstract: "Show the device's posture: each check, pass, fail or unknown, with its evidence.",
        subcommands: [PostureShowCommand.self, PostureReportCommand.self, PostureKeyCommand.self],
        defaultSubcommand: PostureShowCommand.self)
}

/// `cordon posture [show]`: the table of checks.
struct PostureShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show each posture check with its evidence (the default).")

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
        try PostureCommand.printTable(checks)
    }
}

/// `cordon posture report [--nonce N]`, or `--verify FILE --key PUB`.
struct PostureReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print a posture report signed by the device key, or verify one.",
        discussion: """
            Making a report asks for the passcode (checked and counted by the agent) and needs the \
            container unlocked; an app asks through its own verified registration instead. With \
            --verify, checks FILE's signature against the public key in PUB (`cordon posture key`) \
            and, with --nonce, that it answers that nonce; no agent is needed.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var passcode: PasscodeOptions

    @Option(help: "The verifier's nonce (default: 16 random bytes in hex); with --verify, the nonce expected.")
    var nonce: String?

    @Option(help: ArgumentHelp("Verify this report file instead of making one.", valueName: "file"))
    var verify: String?

    @Option(help: ArgumentHelp("The device's public key file (with --verify).", valueName: "pub"))
    var key: String?

    @Flag(help: "With --verify, print the verified payload as JSON.")
    var json = false

    func validate() throws {
        if verify != nil, key == nil { throw ValidationError("--verify needs --key PUB") }
        if verify == nil, key != nil { throw ValidationError("--key is only for --verify") }
        if let nonce, let problem = PostureReportParameters.problem(with: nonce) {
            throw ValidationError("--nonce: \(problem)")
        }
    }

    func run() async throws {
        if let verify, let key { return try check(file: verify, keyFile: key) }
        var generator = SystemRandomNumberGenerator()
        let nonce = self.nonce ?? (0..<16).map { _ in String(format: "%02x", generator.next() as UInt8) }.joined()
        let report = try await passcode.withClient(global) { client, passcode in
            try await client.postureReport(nonce: nonce, passcode: passcode)
        }
        try Output.line(try Output.json(report, compact: true))
    }

    private func check(file: String, keyFile: String) throws {
        let report = try PostureCommand.read(file, what: "report")
        let keyText = String(decoding: try PostureCommand.read(keyFile, what: "public key"), as: UTF8.self)
        let publicKey: [UInt8]
        let bytes: Data
        do {
            publicKey = try DeviceKeySigning.parsePublicKey(keyText)
            bytes = try DeviceKeySigning.verifyReport(report, publicKey: publicKey)
        } catch {
            throw CLIError(
                "\(file) does not verify: \(error)",
                hint: "the report was changed, or signed by another device than the key in \(keyFile)")
        }
        let payload: PostureReportPayload
        do {
            payload = try JSONDecoder().decode(PostureReportPayload.self, from: bytes)
        } catch {
            throw CLIError("\(file): the signed payload is not a posture report: \(error)", hint: "check the file")
        }
        if let nonce, payload.nonce != nonce {
            throw CLIError(
                "\(file) answers the nonce \(payload.nonce), not \(nonce)",
                hint: "a replayed report; ask the device for a new one with your nonce")
        }
        if json {
            try Output.line(try Output.json(payload))
            return
        }
        let who = payload.requester.appId.map { "app \($0) (\(payload.requester.executable ?? "?"))" } ?? "the CLI"
        try Output.line(
            "verified: device key \(payload.keyId), nonce \(payload.nonce), time \(payload.time) ms, \(who), "
                + "policy \(payload.policyVersion)")
        try PostureCommand.printTable(payload.checks)
    }
}

/// `cordon posture key`: the device's public key.
struct PostureKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Print the device's public key (made on first use; the container must be unlocked then).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let client = try await global.connect()
        let reply = try await client.postureKey()
        await client.close()
        guard let raw = Data(base64Encoded: reply.publicKey) else {
            throw CLIError("the agent sent a public key that is not base64", hint: "check cordond's version")
        }
        try Output.line(DeviceKeySigning.publicKeyText(Array(raw)))
    }
}

extension PostureCommand {
    static func printTable(_ checks: [PostureResult]) throws {
        let rows = checks.map { [$0.check.rawValue, $0.status.rawValue, $0.evidence] }
        for line in Format.table([["CHECK", "STATUS", "EVIDENCE"]] + rows) { try Output.line(line) }
    }

    /// A file's bytes (at most 1 MiB).
    static func read(_ path: String, what: String) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError("cannot read the \(what) \(path)", hint: "check the path")
        }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 1 << 20) else {
            throw CLIError("cannot read the \(what) \(path)", hint: "check the path")
        }
        return data
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
