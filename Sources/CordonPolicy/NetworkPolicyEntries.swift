/// What a connection to a host that no `network.pins` pattern names gets (`network.unpinnedHosts`,
/// docs/ARCHITECTURE.md, "Pinned channel").
public enum UnpinnedHosts: String, Sendable, CaseIterable, Restrictiveness, PolicyValue {
    /// The system's roots and the host-name check only.
    case systemTrust
    /// No connection at all (stricter).
    case deny

    public var strictness: Int { self == .deny ? 1 : 0 }
}

/// What a lock of the container does to the pinned channel of wrapped apps while their key is
/// held (`network.onLock`, docs/ARCHITECTURE.md, "Pinned channel"). With the key dropped the
/// connections are cut anyway (the key's revocation).
public enum NetworkLockAction: String, Sendable, CaseIterable, Restrictiveness, PolicyValue {
    /// The channel carries on as if unlocked.
    case keep
    /// No new connection while locked; open ones finish (the default, as a file opened before a
    /// lock stays readable under iOS's "complete unless open").
    case refuseNew
    /// Every open connection is cut at the lock and none is opened while locked (strictest).
    case cut

    public var strictness: Int {
        switch self {
        case .keep: 0
        case .refuseNew: 1
        case .cut: 2
        }
    }
}

/// One `network.pins` entry as a file writes it: host patterns and what their servers' chains
/// must satisfy (an RFC 7469 `pin-sha256` of the server's own, leaf, certificate, or a chain up to
/// one of the listed CA certificates).
public struct NetworkPinEntry: Sendable, Hashable, PolicyListElement {
    /// `HostPattern` texts, at least one.
    public var hosts: [String]
    /// Base64 of 32-byte SHA-256 digests of SubjectPublicKeyInfo (DER).
    public var pinSha256: [String]
    /// PEM `CERTIFICATE` blocks, one per string.
    public var caCertificates: [String]

    /// An entry for `hosts`; at least one pin or CA certificate makes it a valid policy entry.
    public init(hosts: [String], pinSha256: [String] = [], caCertificates: [String] = []) {
        self.hosts = hosts
        self.pinSha256 = pinSha256
        self.caCertificates = caCertificates
    }

    /// The entry as a file writes it (certificates in full).
    public var listElementJSON: String {
        var members = [("hosts", IdentityJSON.strings(hosts))]
        if !pinSha256.isEmpty { members.append(("pinSha256", IdentityJSON.strings(pinSha256))) }
        if !caCertificates.isEmpty { members.append(("caCertificates", IdentityJSON.strings(caCertificates))) }
        return IdentityJSON.object(members)
    }

    /// The entry for `cordon policy show` and `explain`: each certificate as a one-line summary
    /// (its size and an FNV-1a fingerprint of its text) instead of its PEM lines.
    var summaryJSON: String {
        var members = [("hosts", IdentityJSON.strings(hosts))]
        if !pinSha256.isEmpty { members.append(("pinSha256", IdentityJSON.strings(pinSha256))) }
        if !caCertificates.isEmpty {
            members.append(("caCertificates", IdentityJSON.strings(caCertificates.map(Self.certificateSummary))))
        }
        return IdentityJSON.object(members)
    }

    /// `PEM CERTIFICATE, 1190 characters, fnv1a 0123456789abcdef` (a version mark, not a security digest).
    static func certificateSummary(_ pem: String) -> String {
        var hash = FNV1a()
        hash.combine(pem)
        let digits = String(hash.value, radix: 16)
        return "PEM CERTIFICATE, \(pem.utf8.count) characters, fnv1a "
            + String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The merged `network.pins`: every entry of every file that sets them, in the order of the
/// files' rules. A host must satisfy every entry of its most specific matching pattern, so keeping
/// them all is the strictest merge.
public struct NetworkPins: PolicyValue {
    /// The entries, file by file.
    public var entries: [NetworkPinEntry]

    /// These entries.
    public init(_ entries: [NetworkPinEntry]) { self.entries = entries }

    /// The entries with certificates summarised (`cordon policy show`).
    public var policyDescription: String { "[" + entries.map(\.summaryJSON).joined(separator: ", ") + "]" }

    /// The entries as files write them, certificates in full.
    public var policyJSON: String { entries.policyDescription }

    /// Every entry of both.
    @Sendable static func combined(_ lhs: NetworkPins, _ rhs: NetworkPins) -> NetworkPins {
        NetworkPins(lhs.entries + rhs.entries)
    }
}

/// `network.clientCertificate`: the absolute paths of the PEM certificate chain and private key
/// an app presents for mutual TLS.
public struct ClientCertificateEntry: Sendable, Hashable, PolicyValue {
    /// The PEM certificate chain's path (leaf first).
    public var certificate: String
    /// The PEM private key's path.
    public var key: String

    /// The pair of paths.
    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// `{"certificate": "/…", "key": "/…"}`.
    public var policyDescription: String {
        IdentityJSON.object([("certificate", PolicyFormat.quoted(certificate)), ("key", PolicyFormat.quoted(key))])
    }

    /// No client certificate.
    public static var unboundedDescription: String { "none" }

    /// Two files naming different certificates: the one that sorts first (by certificate path,
    /// then key path) wins, so the merge does not depend on the files' order; `explain` shows both.
    @Sendable static func precedes(_ lhs: ClientCertificateEntry?, _ rhs: ClientCertificateEntry?) -> Bool {
        switch (lhs, rhs) {
        case (.some(let lhs), .some(let rhs)): return (lhs.certificate, lhs.key) < (rhs.certificate, rhs.key)
        case (.some, .none): return true
        case (.none, _): return false
        }
    }
}
