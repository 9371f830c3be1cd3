import Foundation

/// One device posture check (`io.cordon.Posture`; docs/ARCHITECTURE.md, "Posture").
public enum PostureCheck: String, Sendable, CaseIterable, Codable {
    /// UEFI Secure Boot is enabled (the `SecureBoot` EFI variable).
    case secureBoot
    /// The kernel is locked down (`/sys/kernel/security/lockdown`: integrity or confidentiality).
    case kernelLockdown
    /// The root file system sits on dm-crypt (LUKS), directly or under LVM.
    case diskEncryption
    /// The desktop locks the screen when the screen saver starts.
    case screenLock
    /// The kernel is not tainted (no proprietary, out-of-tree, unsigned or forced modules).
    case kernelTaint
    /// Yama restricts `ptrace` (`ptrace_scope` ≥ 1): a process cannot attach to its siblings.
    case ptraceScope
    /// The operating system is at least the version the policy names.
    case osVersion
    /// The kernel is at least the version the policy names.
    case kernelVersion
}

/// What a check found.
public enum PostureStatus: String, Sendable, Codable, Equatable {
    case pass
    case fail
    /// The machine cannot answer (no EFI, no securityfs, no such setting): never counted as a pass.
    case unknown
}

/// A check's outcome and the evidence it was decided on.
public struct PostureResult: Sendable, Codable, Equatable {
    public var check: PostureCheck
    public var status: PostureStatus
    /// What was read, where (`/sys/kernel/security/lockdown: [none] integrity`).
    public var evidence: String

    public init(_ check: PostureCheck, _ status: PostureStatus, _ evidence: String) {
        self.check = check
        self.status = status
        self.evidence = evidence
    }
}

/// `io.cordon.Posture.Get`'s reply: every check, in `PostureCheck` order.
public struct PostureReply: Sendable, Codable, Equatable {
    public var checks: [PostureResult]
    public init(checks: [PostureResult]) { self.checks = checks }
}

/// `io.cordon.Posture.Report`'s parameters: the verifier's nonce; for the CLI, the passcode; for an
/// app on another connection of its process, its registration token.
public struct PostureReportParameters: Sendable, Codable, Equatable {
    public var nonce: String
    public var passcode: String?
    public var token: String?
    public init(nonce: String, passcode: String? = nil, token: String? = nil) {
        self.nonce = nonce
        self.passcode = passcode
        self.token = token
    }

    /// Why `nonce` is not acceptable (1 to 128 of `A-Z a-z 0-9 - _ . ~ + / =`), or nil.
    public static func problem(with nonce: String) -> String? {
        guard !nonce.isEmpty else { return "it is empty" }
        guard nonce.utf8.count <= 128 else { return "it has \(nonce.utf8.count) bytes, more than 128" }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/=".utf8)
        if let bad = nonce.utf8.firstIndex(where: { !allowed.contains($0) }) {
            return "byte \(nonce.utf8.distance(from: nonce.utf8.startIndex, to: bad)) is not a letter, digit or -_.~+/="
        }
        return nil
    }
}

/// Who asked for a posture report: a verified managed registration, or the CLI with the passcode.
public struct PostureRequester: Sendable, Codable, Equatable {
    /// `app` (a verified registration: its app id, executable and process) or `cli` (the passcode).
    public var kind: String
    public var appId: String?
    public var executable: String?
    public var pid: Int?
    public init(kind: String, appId: String? = nil, executable: String? = nil, pid: Int? = nil) {
        self.kind = kind
        self.appId = appId
        self.executable = executable
        self.pid = pid
    }
}

/// What a posture report signs (docs/PROTOCOL.md, "Signed posture reports").
public struct PostureReportPayload: Sendable, Codable, Equatable {
    /// Always `PostureSignedReport.format`.
    public var format: String
    /// The verifier's nonce, as given.
    public var nonce: String
    /// When the report was made: Unix time in whole milliseconds.
    public var time: Int
    public var requester: PostureRequester
    /// The version hash of the policy in force.
    public var policyVersion: String
    /// Every check, in `PostureCheck` order.
    public var checks: [PostureResult]
    /// The device key's id: the first 8 bytes of SHA-256 of its public key, in hex.
    public var keyId: String

    public init(
        nonce: String, time: Int, requester: PostureRequester, policyVersion: String, checks: [PostureResult],
        keyId: String
    ) {
        format = PostureSignedReport.format
        self.nonce = nonce
        self.time = time
        self.requester = requester
        self.policyVersion = policyVersion
        self.checks = checks
        self.keyId = keyId
    }

    /// The canonical encoding: JSON in UTF-8 with the keys of every object sorted by their bytes,
    /// no insignificant whitespace, `/` not escaped, integers only. A verifier never re-encodes:
    /// it checks the signature over the bytes the report carries, then reads them.
    public func canonicalBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// A signed posture report, as `Report` returns it and `cordon posture report` writes it.
public struct PostureSignedReport: Sendable, Codable, Equatable {
    /// The format name, also the signature's domain separator.
    public static let format = "cordon.posture.report.v1"

    public var format: String
    /// The canonical payload bytes (`PostureReportPayload.canonicalBytes()`), base64.
    public var payload: String
    /// Ed25519 over `signedMessage(payload)`, base64 (64 bytes).
    public var signature: String
    /// The device's Ed25519 public key, base64 (32 bytes): informative; a verifier uses the key it
    /// trusts, never this one.
    public var publicKey: String

    public init(payload: [UInt8], signature: [UInt8], publicKey: [UInt8]) {
        format = Self.format
        self.payload = Data(payload).base64EncodedString()
        self.signature = Data(signature).base64EncodedString()
        self.publicKey = Data(publicKey).base64EncodedString()
    }

    /// What the device key signs: the format name, one NUL byte, then the payload bytes.
    public static func signedMessage(_ payload: [UInt8]) -> [UInt8] {
        Array(format.utf8) + [0] + payload
    }
}

/// `io.cordon.Posture.GetKey`'s reply: the device's public key.
public struct PostureKeyReply: Sendable, Codable, Equatable {
    /// Ed25519, base64 (32 bytes).
    public var publicKey: String
    /// The first 8 bytes of SHA-256 of the key, in hex.
    public var keyId: String
    public init(publicKey: String, keyId: String) {
        self.publicKey = publicKey
        self.keyId = keyId
    }
}
