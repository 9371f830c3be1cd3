/// The master key wrapped under a passcode-derived key, as stored.
public struct WrappedKey: Sendable, Codable, Equatable {
    /// Record format version.
    public var version: Int
    public var kdf: KDFParameters
    /// AES-256-GCM combined representation: nonce, ciphertext, tag.
    public var sealed: [UInt8]
    /// What the wrapping key needs besides the passcode.
    public var protection: KeyProtection
    /// The TPM object holding the secret the wrapping key also needs (TPM protection only).
    public var hardware: HardwareSeal?
    /// The master key wrapped under the recovery key (AES-256-GCM combined), when one was made.
    public var recovery: [UInt8]?
    /// The TPM NV counter that anchors the container's state (docs/ARCHITECTURE.md, "State
    /// anchor"), bound into the wrapping's authenticated data: removing or changing it breaks the
    /// record, so an anchored container cannot be passed off as one made before anchors.
    public var anchorIndex: UInt32?

    public init(
        version: Int = 1, kdf: KDFParameters, sealed: [UInt8], protection: KeyProtection = .software,
        hardware: HardwareSeal? = nil, recovery: [UInt8]? = nil, anchorIndex: UInt32? = nil
    ) {
        self.version = version
        self.kdf = kdf
        self.sealed = sealed
        self.protection = protection
        self.hardware = hardware
        self.recovery = recovery
        self.anchorIndex = anchorIndex
    }

    /// What binds the record to its state anchor in the wrapping's authenticated data (after the
    /// format's label): nothing when none anchors it.
    public static func anchorBinding(_ anchorIndex: UInt32?) -> [UInt8] {
        anchorIndex.map { Array("|anchor:\($0)".utf8) } ?? []
    }
}

/// What protects the master key's wrapping key (docs/THREAT-MODEL.md, "Passcode and TPM").
public enum KeyProtection: String, Sendable, Codable, Equatable, CaseIterable {
    /// scrypt of the passcode alone: a copy of the database can be attacked offline.
    case software
    /// scrypt of the passcode and a secret the TPM unseals only with the passcode.
    case tpm
    /// As `tpm`, and the TPM unseals only while the policy's PCRs hold their sealed values.
    case tpmWithPCRs = "tpm+pcrs"

    /// How `status` and `doctor` name it.
    public var summary: String {
        switch self {
        case .software: return "software only (scrypt; no TPM)"
        case .tpm: return "TPM without PCRs"
        case .tpmWithPCRs: return "TPM with PCRs"
        }
    }
}

/// A TPM-sealed object as stored: its marshalled public and private parts and the PCRs its
/// policy binds it to.
public struct HardwareSeal: Sendable, Codable, Equatable {
    public var publicBlob: [UInt8]
    public var privateBlob: [UInt8]
    public var pcrs: [Int]

    public init(publicBlob: [UInt8], privateBlob: [UInt8], pcrs: [Int]) {
        self.publicBlob = publicBlob
        self.privateBlob = privateBlob
        self.pcrs = pcrs
    }
}
