/// An app's effective `network` policy (docs/ARCHITECTURE.md, "Pinned channel"): what
/// `io.cordon.App.GetNetworkPolicy` answers a registered app, and what CordonKit's
/// `SecureChannel` and `cordon run --tunnel` enforce.
///
/// A host is governed by the entries whose pattern is the most specific one that matches it (an
/// exact host beats a wildcard; a longer wildcard suffix beats a shorter one); the server's chain
/// must satisfy *every* such entry. A host no pattern matches follows `unpinnedHosts`.
public struct NetworkPolicy: Codable, Sendable, Equatable {
    /// One `network.pins` entry.
    public struct Pin: Codable, Sendable, Equatable {
        /// Host patterns (`HostPattern` syntax: exact, IP address, or `*.example.com`).
        public var hosts: [String]
        /// RFC 7469 `pin-sha256` values: base64 of the SHA-256 of a certificate's
        /// SubjectPublicKeyInfo (DER). When there are any, the server's own (leaf) certificate
        /// must have one of them, as curl's `--pinnedpubkey` checks.
        public var pinSha256: [String]
        /// PEM certificates: when there are any, the chain must be verified up to one of these
        /// (instead of the system's roots). An entry with pins and CA certificates needs both.
        public var caCertificates: [String]
        /// The file and JSON pointer of the entry, for the reason in a refusal
        /// (`/etc/cordon/policy.d/10-net.json#/network/pins/0`).
        public var source: String

        public init(hosts: [String], pinSha256: [String] = [], caCertificates: [String] = [], source: String) {
            self.hosts = hosts
            self.pinSha256 = pinSha256
            self.caCertificates = caCertificates
            self.source = source
        }
    }

    /// A client certificate for mutual TLS: the absolute paths of PEM files the client reads.
    public struct ClientCertificate: Codable, Sendable, Equatable {
        /// The path of the PEM certificate chain (leaf first).
        public var certificate: String
        /// The path of the PEM private key.
        public var key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    public var pins: [Pin]
    /// `deny` (no connection to a host no pattern names) or `systemTrust` (the system's roots
    /// and host-name check only).
    public var unpinnedHosts: String
    /// Where `unpinnedHosts` comes from (file and pointer, or `built-in default`).
    public var unpinnedHostsSource: String
    public var clientCertificate: ClientCertificate?
    /// `network.onLock`: what a lock does to the channel while the key is held, `keep`,
    /// `refuseNew` or `cut`; absent (an agent before the setting) is `refuseNew`, the default.
    public var onLock: String?

    public init(
        pins: [Pin], unpinnedHosts: String, unpinnedHostsSource: String, clientCertificate: ClientCertificate? = nil,
        onLock: String? = nil
    ) {
        self.pins = pins
        self.unpinnedHosts = unpinnedHosts
        self.unpinnedHostsSource = unpinnedHostsSource
        self.clientCertificate = clientCertificate
        self.onLock = onLock
    }
}

/// The reply of `io.cordon.App.GetNetworkPolicy`.
public struct NetworkPolicyReply: Codable, Sendable, Equatable {
    public var policy: NetworkPolicy

    public init(policy: NetworkPolicy) {
        self.policy = policy
    }
}
