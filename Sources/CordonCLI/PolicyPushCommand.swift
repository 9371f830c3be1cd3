import ArgumentParser
import CordonKit
import CordonProtocol
import CordonTrust
import Foundation

/// `cordon policy push`: validates a policy file locally, then installs it atomically.
struct PolicyPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Validate a policy file, then install it atomically where cordond reads it.",
        discussion: """
            Without --admin the file goes to the user policy directory ($CORDON_CONFIG_DIR, else \
            $XDG_CONFIG_HOME/cordon, else ~/.config/cordon, plus /policy.d); with --admin to \
            $CORDON_ADMIN_POLICY_DIR, else /etc/cordon/policy.d (usually needs root). --dir overrides both. \
            Any problem refuses the install and nothing is written. With --admin, FILE.sig is installed \
            too, and when the trust directory holds keys the signature is checked first. cordond picks \
            the file up by itself; if it is reachable, the resulting policy status is printed.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The policy file (its name must end in .json).", valueName: "file"))
    var file: String

    @Flag(help: "Install as an admin policy (may loosen the default; must be signed when keys are trusted).")
    var admin = false

    @Option(help: ArgumentHelp("Install into this directory instead.", valueName: "dir"))
    var dir: String?

    @Flag(help: "Print the resulting status as a JSON object (sorted keys).")
    var json = false

    func run() async throws {
        let name = (file as NSString).lastPathComponent
        guard name.hasSuffix(".json"), !name.hasPrefix(".") else {
            throw CLIError(
                "cordond reads only *.json files not starting with a dot; \(file) would be ignored",
                hint: "rename it to end in .json, e.g. 50-local.json", code: .usage)
        }
        let bytes = try PolicyFiles.read(file)
        let problems = PolicyFiles.problems(in: bytes, path: file, user: !admin)
        guard problems.isEmpty else {
            for problem in problems { Output.note(problem) }
            throw CLIError(
                "\(file) is invalid; nothing was installed",
                hint: "fix the problems above, check with `cordon policy validate\(admin ? "" : " --user") \(file)`")
        }
        let signature = admin ? try signatureIfPresent() : nil
        let client = try? await global.connect()
        let agentStatus = try? await client?.policyStatus()
        if agentStatus == nil { await client?.close() }
        if admin { try checkSignature(bytes, signature, trustDirectory: agentStatus?.trustDirectory) }

        let directory = PolicyPaths.normalized(dir ?? (admin ? PolicyPaths.admin : PolicyPaths.user))
        let destination = directory + "/" + name
        try PolicyFiles.makeDirectory(directory, mode: admin ? 0o755 : 0o700)
        let mode: mode_t = admin ? 0o644 : 0o600
        if let signature {
            // The signature first: the .json rename is what makes cordond look.
            try PolicyFiles.install(signature, at: destination + ".sig", mode: mode)
        } else if admin {
            unlink(destination + ".sig")  // A stale signature of an earlier version.
        }
        try PolicyFiles.install(bytes, at: destination, mode: mode)
        let installed = "installed \(destination)\(signature == nil ? "" : " and \(name).sig")"
        if json { Output.note("cordon: " + installed) } else { try Output.line(installed) }

        guard let client, agentStatus != nil else {
            Output.note("cordon: cordond is not reachable; it applies the file when it starts")
            return
        }
        let status: PolicyStatus
        do {
            status = try await client.reloadPolicy()
            await client.close()
        } catch {
            await client.close()
            Output.note(
                "cordon: warning: cordond did not report the new status: \(CLIError(error)?.message ?? "\(error)")")
            return
        }
        try PolicyStatusCommand.print(status, json: json)
        try check(status, destination: destination)
    }

    /// The bytes of `FILE.sig`, or `nil` when there is none.
    func signatureIfPresent() throws(CLIError) -> [UInt8]? {
        guard access(file + ".sig", F_OK) == 0 else { return nil }
        return try PolicyFiles.read(file + ".sig")
    }

    /// Refuses an admin file cordond would reject for its signature.
    func checkSignature(_ bytes: [UInt8], _ signature: [UInt8]?, trustDirectory: String?) throws(CLIError) {
        let trustDirectory = trustDirectory ?? PolicyPaths.trust
        let trust = TrustStore.load(directory: trustDirectory)
        guard trust.requiresSignatures else { return }
        do {
            _ = try trust.verify(
                Data(bytes), name: (file as NSString).lastPathComponent, now: Date().timeIntervalSince1970,
                signature: signature.map { String(decoding: $0, as: UTF8.self) })
        } catch {
            let problem = error == .missing ? "there is no \(file).sig" : "\(error)"
            throw CLIError(
                "\(file): signature: \(problem); nothing was installed",
                hint: "\(trustDirectory) holds trusted keys, so admin files must be signed: "
                    + "`cordon policy sign \(file) --key NAME.key` with a trusted key")
        }
    }

    /// Fails when cordond rejected the installed file, warns when it does not read that directory.
    func check(_ status: PolicyStatus, destination: String) throws(CLIError) {
        guard let source = status.sources.first(where: { $0.path == destination }) else {
            let expected = admin ? status.adminDirectory : status.userDirectory
            Output.note(
                "cordon: warning: cordond does not read \(destination); it reads \(admin ? "admin" : "user") "
                    + "policies from \(expected)")
            return
        }
        guard source.isApplied else {
            throw CLIError(
                "cordond rejected \(destination): \(source.problems.joined(separator: "; "))",
                hint: "the last good policy stays in force; fix the file and push it again")
        }
    }
}
