extension PolicyKeys {
    /// `network`: the pinned channel's policy (docs/ARCHITECTURE.md, "Pinned channel"): which
    /// hosts' servers must present which keys or chain up to which CAs, what hosts no pattern
    /// names get, and the client certificate for mutual TLS. Per app: an override adds to the
    /// base for the apps it lists.
    public enum Network {
        static let section = PolicySection(
            "network", brief: "Pinned TLS: pins per host, unpinned hosts, the client certificate, what a lock does.",
            summary:
                "The pinned TLS channel apps use (CordonKit's SecureChannel, cordon run --tunnel): host patterns with the keys (RFC 7469 pin-sha256) or CA certificates their servers' chains must satisfy, what a host no pattern names gets, and the client certificate for mutual TLS."
        )
        static let adminOnly = "belongs in an admin policy: a user policy cannot change which servers apps trust"

        /// Pins by host pattern (admin files only); the entries of every file combine.
        public static let pins = PolicySetting<[NetworkPinEntry], NetworkPins>(
            section, "pins", scope: .perApp, .networkPins, resolve: { NetworkPins($0) },
            merge: .combine(NetworkPins.combined), unset: NetworkPins([]), builtin: [],
            userRefusal: "\"network.pins\" " + adminOnly,
            summary:
                "Pins: each entry lists host patterns (an exact host, an IP address, or \"*.example.com\" for one label) and the RFC 7469 pin-sha256 values or PEM CA certificates their servers' chains must satisfy. A host is governed by its most specific matching pattern and must satisfy every entry with it. Admin policies only; the entries of all files combine, and an override adds entries for the apps it lists."
        )
        /// What a host no pattern names gets; `deny` is stricter.
        public static let unpinnedHosts = PolicySetting<UnpinnedHosts, UnpinnedHosts>(
            section, "unpinnedHosts", scope: .perApp, .choice([.systemTrust, .deny]), merge: .stricter(Stricter.level),
            unset: .systemTrust, builtin: .systemTrust,
            summary:
                "What a connection to a host no pattern names gets: \"systemTrust\" (the system's roots and the host-name check) or \"deny\" (no connection; stricter)."
        )
        /// The client certificate for mutual TLS (admin files only).
        public static let clientCertificate = PolicySetting<ClientCertificateEntry, ClientCertificateEntry?>(
            section, "clientCertificate", scope: .perApp, .clientCertificate, resolve: { $0 },
            merge: .stricter(ClientCertificateEntry.precedes), unset: nil, builtin: nil,
            userRefusal: "\"network.clientCertificate\" " + adminOnly,
            summary:
                "The client certificate apps present for mutual TLS: the absolute paths of a PEM certificate chain (\"certificate\", leaf first) and its PEM private key (\"key\"), which the app must be able to read. Admin policies only; when two files name different ones, the one whose paths sort first wins. Absent: none."
        )
        /// What a lock does to the channel while the key is held; `cut` is strictest.
        public static let onLock = PolicySetting<NetworkLockAction, NetworkLockAction>(
            section, "onLock", scope: .perApp, .choice([.keep, .refuseNew, .cut]), merge: .stricter(Stricter.level),
            unset: .keep, builtin: .refuseNew,
            summary:
                "What locking the container does to the pinned channel (SecureChannel, cordon run --tunnel) while the app's key is held: \"keep\" (connections go on as if unlocked), \"refuseNew\" (the default: no new connection while locked, open ones finish, as files opened before a lock stay readable) or \"cut\" (open connections are closed at the lock and none is opened while locked; strictest). With the key dropped, every connection is cut anyway."
        )
        static let all: [any AnyPolicySetting] = [pins, unpinnedHosts, clientCertificate, onLock]
    }
}
