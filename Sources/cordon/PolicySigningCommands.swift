import ArgumentParser
import CordonKit
import CordonProtocol
import CordonTrust
import Foundation

/// `cordon policy keygen`: a new Ed25519 key pair for signing admin policy files.
struct PolicyKeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create an Ed25519 key pair for signing admin policy files: NAME.key (mode 0600) and NAME.pub.",
        discussion: """
            Install NAME.pub in the trust directory (/etc/cordon/trust) of every machine; from then on \
            cordond accepts only admin files signed by a trusted key. Keep NAME.key secret, ideally off \
            those machines. Existing files are never overwritten.
            """)

    @Option(help: ArgumentHelp("The key pair's path without extension.", valueName: "name"))
    var out: String

    func run() async throws {
        let privatePath = out + ".key"
        let publicPath = out + ".pub"
        for path in [privatePath, publicPath] where access(path, F_OK) == 0 {
            throw CLIError("\(path) already exists", hint: "choose another --out, or remove the old key pair first")
        }
        let pair = PolicySigning.generateKeyPair()
        try create(privatePath, Array(pair.privateKey.utf8), mode: 0o600)
        try create(publicPath, Array(pair.publicKey.utf8), mode: 0o644)
        for line in Format.table([
            ["key id:", pair.keyId],
            ["private key:", "\(privatePath) (mode 0600; keep it secret)"],
            ["public key:", "\(publicPath) (install it in /etc/cordon/trust/)"],
        ]) { try Output.line(line) }
    }

    /// Creates `path` (which must not exist) with `mode` and `bytes`.
    func create(_ path: String, _ bytes: [UInt8], mode: mode_t) throws(CLIError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw PolicyFiles.writeError(path) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else { throw PolicyFiles.writeError(path) }
    }
}

/// `cordon policy sign`: a detached signature for an admin policy file.
struct PolicySignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign an admin policy file with a private key: writes FILE.sig.",
        discussion: """
            The file is validated first (as an admin file); an invalid file is not signed. The signature \
            covers the file's exact bytes: any later edit needs a new signature. Install both with \
            `cordon policy push FILE --admin`.
            """)

    @Argument(help: ArgumentHelp("The admin policy file.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The private key (from `cordon policy keygen`).", valueName: "NAME.key"))
    var key: String

    func run() async throws {
        let bytes = try PolicyFiles.read(file)
        let problems = PolicyFiles.problems(in: bytes, path: file, user: false)
        guard problems.isEmpty else {
            for problem in problems { Output.note(problem) }
            throw CLIError(
                "\(file) is invalid; it was not signed",
                hint: "fix the problems above, check with `cordon policy validate \(file)`")
        }
        let keyText = String(decoding: try PolicyFiles.read(key), as: UTF8.self)
        let signature: String
        do {
            signature = try PolicySigning.sign(Data(bytes), privateKey: keyText)
        } catch {
            throw CLIError(
                "\(key) is not a Cordon policy signing key: \(error)",
                hint: "use the NAME.key written by `cordon policy keygen --out NAME`")
        }
        try PolicyFiles.install(Array(signature.utf8), at: file + ".sig", mode: 0o644)
        let keyId = signature.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
        try Output.line("signed \(file) with key \(keyId): \(file).sig")
    }
}
