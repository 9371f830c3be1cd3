import CordonFleet
import CordonSecrets
import CordonTPM
import Crypto
import Foundation

/// The machine's own Ed25519 key (docs/FLEET.md, "The device key"): it signs the machine's
/// reports, and SHA-256 of its public key is the device id admins address commands to. Made on
/// first start; sealed to the TPM where there is one (the blobs in `device-key.tpm` open only on
/// this TPM), else kept in `device-key`, mode 0600 in root's state directory.
public struct FleetDeviceKey: Sendable {
    /// Where the private key is kept.
    public enum Protection: String, Sendable { case tpm, file }

    private let seed: SecureBytes
    /// The 32-byte public key.
    public let publicKey: [UInt8]
    public let protection: Protection

    /// The device id: SHA-256 of the public key, 64 hex digits.
    public var id: String { Self.id(of: publicKey) }

    /// The sealed object's authValue. Not a secret: what protects the key is that the sealed blobs
    /// open only inside this machine's TPM (fleetd runs unattended, with no one to type a passcode).
    static var authorization: SecureBytes {
        SecureBytes(copying: Array(SHA256.hash(data: Array("cordon-fleetd device key".utf8))))
    }

    /// The id of a public key.
    public static func id(of publicKey: [UInt8]) -> String { TUFHex.encode(SHA256.hash(data: publicKey)) }

    /// Opens the key in `stateDirectory`, or makes one. `tcti` names the TPM (nil: `/dev/tpmrm0` if
    /// present, else no TPM).
    public static func openOrCreate(in stateDirectory: String, tcti: String?) throws(FleetdError) -> FleetDeviceKey {
        let sealedPath = stateDirectory + "/device-key.tpm"
        let filePath = stateDirectory + "/device-key"
        let tpm = tcti ?? (FileManager.default.fileExists(atPath: "/dev/tpmrm0") ? TPMConnection.defaultTCTI : nil)
        if let data = FileManager.default.contents(atPath: sealedPath) {
            guard let tpm else {
                throw FleetdError(
                    "\(sealedPath) is sealed to a TPM and there is none",
                    hint: "pass --tpm-tcti, or remove the file to make a new device id")
            }
            return try openSealed(Array(data), path: sealedPath, tcti: tpm)
        }
        if let data = FileManager.default.contents(atPath: filePath) {
            return try openFile(Array(data), path: filePath)
        }
        let key = Curve25519.Signing.PrivateKey()
        let seed = SecureBytes(copying: key.rawRepresentation)
        let publicKey = Array(key.publicKey.rawRepresentation)
        if let tpm {
            do {
                let connection = try TPMConnection(tcti: tpm)
                let sealed = try connection.seal(seed, authorization: Self.authorization, pcrs: [])
                let text =
                    "cordon-fleet-device-key-tpm-v1\n\(TUFHex.encode(publicKey))\n\(TUFHex.encode(sealed.publicBlob))\n"
                    + "\(TUFHex.encode(sealed.privateBlob))\n"
                try AtomicFile.write(Array(text.utf8), to: sealedPath, mode: 0o600)
                return FleetDeviceKey(seed: seed, publicKey: publicKey, protection: .tpm)
            } catch let error as FleetdError {
                throw error
            } catch {
                throw FleetdError(
                    "cannot seal the device key to the TPM (\(tpm)): \(error)",
                    hint: "check the TPM, or pass --tpm-tcti")
            }
        }
        let text =
            "cordon-fleet-device-key-v1\n\(TUFHex.encode(publicKey))\n\(seed.withUnsafeBytes { TUFHex.encode($0) })\n"
        try AtomicFile.write(Array(text.utf8), to: filePath, mode: 0o600)
        return FleetDeviceKey(seed: seed, publicKey: publicKey, protection: .file)
    }

    private static func openSealed(_ bytes: [UInt8], path: String, tcti: String) throws(FleetdError) -> FleetDeviceKey {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count == 4, lines[0] == "cordon-fleet-device-key-tpm-v1", let publicKey = TUFHex.decode(lines[1]),
            let publicBlob = TUFHex.decode(lines[2]), let privateBlob = TUFHex.decode(lines[3])
        else { throw FleetdError("\(path) is not a sealed device key", hint: "remove it to make a new device id") }
        do {
            let connection = try TPMConnection(tcti: tcti)
            let seed = try connection.unseal(
                TPMSealedObject(publicBlob: publicBlob, privateBlob: privateBlob, pcrs: []),
                authorization: Self.authorization)
            return try FleetDeviceKey(checking: seed, publicKey: publicKey, protection: .tpm, path: path)
        } catch let error as FleetdError {
            throw error
        } catch {
            throw FleetdError(
                "cannot unseal \(path) with the TPM (\(tcti)): \(error)",
                hint: "the key opens only on the TPM it was sealed to")
        }
    }

    private static func openFile(_ bytes: [UInt8], path: String) throws(FleetdError) -> FleetDeviceKey {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count == 3, lines[0] == "cordon-fleet-device-key-v1", let publicKey = TUFHex.decode(lines[1]),
            let seed = TUFHex.decode(lines[2])
        else { throw FleetdError("\(path) is not a device key", hint: "remove it to make a new device id") }
        return try FleetDeviceKey(
            checking: SecureBytes(copying: seed), publicKey: publicKey, protection: .file, path: path)
    }

    private init(seed: SecureBytes, publicKey: [UInt8], protection: Protection) {
        self.seed = seed
        self.publicKey = publicKey
        self.protection = protection
    }

    private init(checking seed: SecureBytes, publicKey: [UInt8], protection: Protection, path: String)
        throws(FleetdError)
    {
        let derived = seed.withUnsafeBytes { try? Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
        guard let derived, Array(derived.publicKey.rawRepresentation) == publicKey else {
            throw FleetdError(
                "\(path): the private key does not match the public key", hint: "remove it to make a new device id")
        }
        self.init(seed: seed, publicKey: publicKey, protection: protection)
    }

    /// The Ed25519 signature over `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        let signature = seed.withUnsafeBytes { raw in
            (try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)).flatMap { try? $0.signature(for: message) }
        }
        return signature.map(Array.init) ?? []
    }
}
