import CordonFleet
import Foundation

/// An admin's key file: `cordon-fleet-key-v1 <role> <base64 Ed25519 seed>` (mode 0600), with
/// `cordon-fleet-public-key-v1 <role> <key id> <hex public key>` in a `.pub` beside it.
public struct FleetKeyFile: Sendable {
    /// The private key file's first word.
    public static let magic = "cordon-fleet-key-v1"
    /// The public key file's first word.
    public static let publicMagic = "cordon-fleet-public-key-v1"

    /// The role the key was made for.
    public var role: FleetRole
    public var key: TUFSigningKey

    public init(role: FleetRole, key: TUFSigningKey) {
        self.role = role
        self.key = key
    }

    /// The key's TUF key id.
    public var keyID: String { key.publicKey.id }

    /// The workspace's name for it: `<role>-<first 8 hex of the key id>.key`.
    public var fileName: String { "\(role.rawValue)-\(keyID.prefix(8)).key" }

    /// The private key file's text.
    public var text: String { "\(Self.magic) \(role.rawValue) \(Data(key.seed).base64EncodedString())\n" }

    /// The public key file's text.
    public var publicText: String {
        "\(Self.publicMagic) \(role.rawValue) \(keyID) \(TUFHex.encode(key.publicKey.ed25519 ?? []))\n"
    }

    /// Parses a key file's text; `path` names it in errors.
    public init(text: String, path: String) throws(FleetAdminError) {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        let hint = "a fleet key file is one line `\(Self.magic) ROLE SEED` as `cordon fleet init` writes it"
        guard words.first == Self.magic else {
            if words.first == Self.publicMagic {
                throw FleetAdminError(
                    .key, "\(path) is a public key; signing needs the private key", hint: "give the .key file beside it"
                )
            }
            throw FleetAdminError(.key, "\(path) is not a Cordon fleet key file", hint: hint)
        }
        guard words.count == 3 else {
            throw FleetAdminError(.key, "\(path): expected 3 words on the line, found \(words.count)", hint: hint)
        }
        guard let role = FleetRole(rawValue: words[1]) else {
            throw FleetAdminError(
                .key, "\(path): role \"\(words[1])\" is not one of \(FleetRole.allNames)", hint: hint)
        }
        guard let seed = Data(base64Encoded: words[2]), let key = try? TUFSigningKey(seed: Array(seed)) else {
            throw FleetAdminError(.key, "\(path): the seed is not a base64 32-byte Ed25519 seed", hint: hint)
        }
        self.init(role: role, key: key)
    }

    /// Reads the key file at `path`.
    public static func read(_ path: String) throws(FleetAdminError) -> FleetKeyFile {
        guard FleetFiles.exists(path) else {
            throw FleetAdminError(
                .key, "key file \(path) does not exist", hint: "check the path (root keys are kept offline: mount them)"
            )
        }
        let bytes: [UInt8]
        do {
            bytes = try FleetFiles.read(path)
        } catch {
            throw FleetAdminError(.key, error.message, hint: "key files are mode 0600: run as their owner")
        }
        return try FleetKeyFile(text: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// Writes the key (0600) to `path` and its public half to the same path with `.pub` for `.key`.
    /// An existing file is never overwritten.
    public func write(to path: String) throws(FleetAdminError) {
        let publicPath = (path.hasSuffix(".key") ? String(path.dropLast(4)) : path) + ".pub"
        for existing in [path, publicPath] where FleetFiles.exists(existing) {
            throw FleetAdminError(
                .key, "\(existing) already exists", hint: "choose another path; keys are never overwritten")
        }
        try FleetFiles.write(Array(text.utf8), to: path, mode: 0o600)
        try FleetFiles.write(Array(publicText.utf8), to: publicPath, mode: 0o644)
    }
}
