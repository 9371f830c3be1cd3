extension PolicyKeys {
    /// `identity`: the identity broker (docs/ARCHITECTURE.md, "Identity"): the providers apps get
    /// tokens from, which domain each serves, which apps share a domain's tokens (access groups)
    /// and how long a session lives offline. Container-wide: the sessions are the container's.
    public enum Identity {
        static let section = PolicySection(
            "identity", brief: "Identity providers, domains, access groups and offline limits.",
            summary:
                "The identity broker: OAuth 2.0 / OpenID Connect and CPA providers, which provider serves each domain, which apps share a domain's tokens (access groups), and how long a session lives without reaching its provider.",
            perAppRefusal: "sign-in sessions belong to the whole container")
        static let adminOnly =
            "belongs in an admin policy: a user policy cannot add providers, domains or access groups"

        /// OAuth 2.0 / OpenID Connect providers by name (admin files only).
        public static let providers = PolicySetting<[OAuthProviderEntry], [OAuthProviderEntry]>(
            section, "providers", scope: .global, .oauthProviders, merge: .combine { $0 + $1 }, unset: [], builtin: [],
            userRefusal: "\"identity.providers\" " + adminOnly,
            summary:
                "OAuth 2.0 / OpenID Connect providers: a name, an issuer or explicit endpoints (https, or http on a loopback host), a client id, scopes and the sign-in flow (\"device\" or \"authorizationCode\")."
        )
        /// CPA (ETSI TS 103 407) authorization providers by name (admin files only).
        public static let cpaProviders = PolicySetting<[CPAProviderEntry], [CPAProviderEntry]>(
            section, "cpaProviders", scope: .global, .cpaProviders, merge: .combine { $0 + $1 }, unset: [],
            builtin: [], userRefusal: "\"identity.cpaProviders\" " + adminOnly,
            summary:
                "Cross-Platform Authentication (ETSI TS 103 407) providers: a name, the base URL of the authorization provider, the domains it serves and the token apps get (\"mode\": \"user\", the default, after the user pairs the device with a code, or \"client\", anonymous)."
        )
        /// Which provider signs in for each domain (admin files only).
        public static let domains = PolicySetting<[IdentityDomainEntry], [IdentityDomainEntry]>(
            section, "domains", scope: .global, .identityDomains, merge: .combine { $0 + $1 }, unset: [], builtin: [],
            userRefusal: "\"identity.domains\" " + adminOnly,
            summary: "The domains apps ask tokens for, each with the provider (by name) that signs in for it.")
        /// Access groups: the apps that share the tokens of the group's domains (admin files only).
        public static let accessGroups = PolicySetting<[AccessGroupEntry], [AccessGroupEntry]>(
            section, "accessGroups", scope: .global, .accessGroups, merge: .combine { $0 + $1 }, unset: [],
            builtin: [], userRefusal: "\"identity.accessGroups\" " + adminOnly,
            summary:
                "Access groups: a name, the managed apps in it and the domains whose tokens they share; an app in no group with a domain gets no token for it."
        )
        /// Minutes a session lives without reaching its provider before apps get no token (counted
        /// from the provider's last sign-in or renewal; a renewal is tried half-way and at the
        /// limit); the smallest wins; absent, no limit (the user stays locally authenticated until
        /// sign-out).
        public static let offlineGraceMinutes = PolicySetting<Int, Int?>(
            section, "offlineGraceMinutes", scope: .global, .integer(1...525_600), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: nil,
            summary:
                "Minutes a session may go without reaching its provider (1 to 525600), counted from the provider's last sign-in or renewal; the agent renews half-way through, so a device that reaches its provider never hits it. Past it, one renewal is tried and, failing that, apps are told SessionExpired and get no token until a renewal or sign-in succeeds. Absent: no limit."
        )
        /// Days without reaching the provider after which the container is wiped; the smallest wins.
        public static let offlineWipeDays = PolicySetting<Int, Int?>(
            section, "offlineWipeDays", scope: .global, .integer(1...3650), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: nil,
            summary:
                "Days a session may go without reaching its provider (1 to 3650) before the container is wiped. Absent: never."
        )
        static let all: [any AnyPolicySetting] = [
            providers, cpaProviders, domains, accessGroups, offlineGraceMinutes, offlineWipeDays,
        ]
    }
}

extension StringPattern {
    /// An identity provider's or access group's name.
    static let identityName = StringPattern(
        expected: "a name of 1 to 63 lower-case letters, digits, '-' and '_' starting with a letter or digit",
        accepts: { IdentityRules.isName($0) }, regex: #"^[a-z0-9][a-z0-9_-]{0,62}$"#)
    /// A DNS domain name, lower case.
    static let domainName = StringPattern(
        expected: "a lower-case DNS domain name such as \"corp.example\"",
        accepts: { IdentityRules.isDomain($0) },
        regex: #"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$"#)
    /// An endpoint: https, or http on a loopback host; no user information or fragment.
    static let endpointURL = StringPattern(
        expected: "an https URL (http only on 127.0.0.1, [::1] or localhost) without user information or fragment",
        accepts: { IdentityRules.isEndpoint($0) },
        regex: #"^(https://[^/?#@\s]+|http://(127\.[0-9.]+|\[::1\]|localhost)(:[0-9]+)?)([/?][^#\s]*)?$"#)
    /// A sign-in flow.
    static let identityFlow = StringPattern(
        expected: "\"device\" or \"authorizationCode\"",
        accepts: { IdentityFlow(rawValue: $0) != nil }, regex: "^(device|authorizationCode)$")
    /// A CPA token mode.
    static let cpaMode = StringPattern(
        expected: "\"user\" or \"client\"", accepts: { CPATokenMode(rawValue: $0) != nil }, regex: "^(user|client)$")
    /// An OAuth scope token (RFC 6749 §3.3).
    static let scopeToken = StringPattern(
        expected: "a scope (printable ASCII without spaces, quotes or backslashes)",
        accepts: { IdentityRules.isScope($0) }, regex: #"^[!#-\[\]-~]+$"#)
    /// An OAuth client id.
    static let clientID = StringPattern(
        expected: "a client id (1 to 255 printable ASCII characters)",
        accepts: { !$0.isEmpty && $0.utf8.count <= 255 && $0.utf8.allSatisfy { (0x21...0x7E).contains($0) } },
        regex: #"^[!-~]{1,255}$"#)
}

/// The checks of the `identity` section's strings (no Foundation: the policy module is pure).
enum IdentityRules {
    static func isName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...63).contains(bytes.count), isLowerAlnum(bytes[0]) else { return false }
        return bytes.allSatisfy { isLowerAlnum($0) || $0 == 0x2D || $0 == 0x5F }
    }

    static func isDomain(_ text: String) -> Bool {
        guard (1...253).contains(text.utf8.count) else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            let bytes = Array(label.utf8)
            guard let first = bytes.first, let last = bytes.last, bytes.count <= 63 else { return false }
            return isLowerAlnum(first) && isLowerAlnum(last) && bytes.allSatisfy { isLowerAlnum($0) || $0 == 0x2D }
        }
    }

    static func isScope(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// `https://host[:port][/path][?query]`, or `http://` on a loopback host.
    static func isEndpoint(_ text: String) -> Bool {
        guard text.utf8.count <= 2048, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), !text.contains("#")
        else { return false }
        let secure = text.hasPrefix("https://")
        guard secure || text.hasPrefix("http://") else { return false }
        let rest = text.dropFirst(secure ? 8 : 7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty, !authority.contains("@") else { return false }
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[...close]
            let port = authority[authority.index(after: close)...]
            guard port.isEmpty || (port.hasPrefix(":") && isPort(port.dropFirst())) else { return false }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, !parts[0].isEmpty else { return false }
            guard parts.count == 1 || isPort(parts[1]) else { return false }
            host = parts[0]
        }
        return secure || isLoopback(host.lowercased())
    }

    static func isLoopback(_ host: String) -> Bool {
        if host == "[::1]" || host == "localhost" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard let port = Int(text), !text.isEmpty, text.allSatisfy(\.isASCII) else { return false }
        return (1...65535).contains(port)
    }

    private static func isLowerAlnum(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
    }
}
