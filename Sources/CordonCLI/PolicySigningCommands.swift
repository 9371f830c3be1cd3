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
            covers the file's name, a serial number, an expiry and the file's exact bytes: cordond refuses \
            it under another name, after it expired, and when it already accepted a higher serial for that \
            name (a rollback). Any later edit needs a new signature with a higher serial. Install both with \
            `cordon policy push FILE --admin`.
            """)

    @Argument(help: ArgumentHelp("The admin policy file.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The private key (from `cordon policy keygen`).", valueName: "NAME.key"))
    var key: String

    @Option(
        help: ArgumentHelp(
            "The file's version: cordond refuses a lower serial than one it accepted for this name "
                + "(default: the current time in seconds since 1970).", valueName: "N"))
    var serial: String?

    @Option(
        help: ArgumentHelp(
            "When the signature expires, UTC: 2027-01-01 or 2027-01-01T00:00:00Z (default: one year from now).",
            valueName: "DATE"))
    var expires: String?

    @Option(
        help: ArgumentHelp(
            "The file name the signature is for (default: FILE's name; it must be the installed name).",
            valueName: "NAME"))
    var name: String?

    func run() async throws {
        let now = Date().timeIntervalSince1970
        let header = try header(now: now)
        let bytes = try PolicyFiles.read(file)
        let problems = PolicyFiles.problems(in: bytes, path: file, user: false)
        guard problems.isEmpty else {
            for problem in problems { Output.note(problem) }
            throw CLIError(
                "\(file) is invalid; it was not signed",
                hint: "fix the problems above, check with `cordon policy validate \(file)`")
        }
        let keyText = String(decoding: try PolicyFiles.read(key), as: UTF8.self)
        let signature: PolicySignature
        do {
            signature = try PolicySigning.sign(
                Data(bytes), name: header.name, serial: header.serial, expires: header.expires, privateKey: keyText)
        } catch {
            throw CLIError(
                "\(key) is not a Cordon policy signing key: \(error)",
                hint: "use the NAME.key written by `cordon policy keygen --out NAME`")
        }
        try PolicyFiles.install(Array(signature.text.utf8), at: file + ".sig", mode: 0o644)
        try Output.line(
            "signed \(file) as \(signature.name), serial \(signature.serial), expires \(signature.expiresText), "
                + "with key \(signature.keyId): \(file).sig")
    }

    /// The name, serial and expiry to sign, from the options or their defaults.
    func header(now: Double) throws(CLIError) -> (name: String, serial: Int, expires: Double) {
        let name = name ?? (file as NSString).lastPathComponent
        guard PolicySignature.isValidName(name) else {
            throw CLIError(
                "--name \"\(name)\" is not a file name", hint: "give the name only, e.g. 10-base.json", code: .usage)
        }
        var serial = Int(now)
        if let text = self.serial {
            guard let value = PolicySignature.parseSerial(text) else {
                throw CLIError(
                    "--serial \"\(text)\" is not a whole number from 0 to \(Int64.max)",
                    hint: "e.g. --serial 42; each new version of a file needs a higher serial", code: .usage)
            }
            serial = value
        }
        var expires = now + PolicySigning.defaultValiditySeconds
        if let text = self.expires {
            guard let value = PolicySignature.parseDate(text) else {
                throw CLIError(
                    "--expires \"\(text)\" is not a UTC date or time",
                    hint: "e.g. --expires 2027-01-01 or --expires 2027-01-01T00:00:00Z", code: .usage)
            }
            guard value > now else {
                throw CLIError(
                    "--expires \(text) is in the past; cordond would refuse the signature",
                    hint: "give a later date", code: .usage)
            }
            expires = value
        }
        return (name, serial, expires)
    }
}
