/// A host pattern of the `network` policy section (docs/ARCHITECTURE.md, "Pinned channel"): an
/// exact host name, an IP address, or a wildcard `*.example.com` that stands for exactly one
/// label, as a certificate's wildcard does (RFC 6125 §6.4.3, the CA/Browser Forum's rules).
///
/// What is refused, with the reason `HostPattern.Problem` names: a bare `*` and `**` (a pin for
/// every host is `unpinnedHosts`' job, not a pattern's), a wildcard anywhere but as the whole
/// left-most label (`a*.example.com`, `a.*.example.com`, `*.*.example.com`), a wildcard over fewer
/// than two labels (`*.com`), a wildcard over an IP address, upper case, a trailing dot, empty
/// labels, labels over 63 bytes or names over 253, and anything but ASCII letters, digits, `-`
/// (internationalised names are written as their A-labels, `xn--…`).
///
/// Matching lower-cases the host and drops one trailing dot; `*.example.com` matches
/// `a.example.com`, never `example.com` or `a.b.example.com`. Pure: no Foundation.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// Why a pattern is refused.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        case empty
        case bareWildcard
        case wildcardNotWholeLeftmostLabel
        case wildcardOverTooFewLabels
        case wildcardOverAddress
        case invalidCharacter
        case emptyLabel
        case tooLong

        public var description: String {
            switch self {
            case .empty: return "a host pattern is empty"
            case .bareWildcard:
                return "\"*\" and \"**\" would pin every host: use \"unpinnedHosts\" for hosts no pattern names"
            case .wildcardNotWholeLeftmostLabel:
                return "a wildcard may only be the whole left-most label, as in \"*.example.com\""
            case .wildcardOverTooFewLabels:
                return
                    "a wildcard must stand for one label left of at least two labels (\"*.example.com\", not \"*.com\")"
            case .wildcardOverAddress: return "a wildcard cannot stand for part of an IP address"
            case .invalidCharacter:
                return "a host name is lower-case ASCII letters, digits, '-' and '.' (A-labels for international names)"
            case .emptyLabel: return "a host name has an empty label (two dots, or a leading or trailing dot)"
            case .tooLong: return "a host name is at most 253 bytes, each label at most 63"
            }
        }
    }

    /// The pattern as written.
    public let text: String
    /// `*.` + `suffix` when true; the exact host otherwise.
    public let isWildcard: Bool
    /// The part after `*.` for a wildcard; the whole host otherwise.
    let suffix: String

    /// Parses `text`; throws `Problem` when it is not a pattern.
    public init(validating text: String) throws(Problem) {
        guard !text.isEmpty else { throw .empty }
        if text == "*" || text.hasPrefix("**") { throw .bareWildcard }
        if Self.isIPv4(text) || Self.isIPv6(text) {
            self.text = text
            self.isWildcard = false
            self.suffix = Self.isIPv6(text) ? text.lowercased() : text
            return
        }
        let wildcard = text.utf8.starts(with: "*.".utf8)
        let rest = wildcard ? String(text.dropFirst(2)) : text
        guard !rest.utf8.contains(UInt8(ascii: "*")) else { throw .wildcardNotWholeLeftmostLabel }
        guard rest.utf8.count <= 253 else { throw .tooLong }
        let labels = rest.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else { throw .emptyLabel }
            guard label.utf8.count <= 63 else { throw .tooLong }
            guard label.utf8.allSatisfy(Self.isHostByte) else { throw .invalidCharacter }
        }
        if wildcard {
            if Self.isIPv4(rest) { throw .wildcardOverAddress }
            guard labels.count >= 2 else { throw .wildcardOverTooFewLabels }
        }
        self.text = text
        self.isWildcard = wildcard
        self.suffix = rest
    }

    /// `nil` when `text` is not a pattern.
    public init?(_ text: String) {
        guard let pattern = try? HostPattern(validating: text) else { return nil }
        self = pattern
    }

    public var description: String { text }

    /// Whether `host` (a name as a client would connect to it, or an IP address) matches.
    public func matches(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        guard isWildcard else { return name.utf8.elementsEqual(suffix.utf8) }
        guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) else { return false }
        let first = name[name.startIndex..<dot]
        let after = name[name.index(after: dot)...]
        // The wildcard stands for one whole label of a host name: not empty, no '*' of the host's
        // own, never part of an address.
        guard !first.isEmpty, !first.utf8.contains(UInt8(ascii: "*")), !Self.isIPv4(String(name)) else {
            return false
        }
        return after.utf8.elementsEqual(suffix.utf8)
    }

    /// How specific the pattern is: an exact host beats any wildcard; among wildcards the longer
    /// suffix wins. The channel uses the most specific pattern that matches a host.
    public var specificity: Int { isWildcard ? suffix.utf8.count : 1_000 + suffix.utf8.count }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D
    }

    /// Whether `host` is an IP address (dotted-quad IPv4, or IPv6), not a name: the channel sends
    /// no SNI for it and checks it against the certificate's iPAddress entries.
    public static func isAddress(_ host: String) -> Bool { isIPv4(host) || isIPv6(host) }

    /// Dotted-quad IPv4, each part 0...255 without leading zeros.
    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                part.utf8.count == 1 || part.utf8.first != 0x30, let value = Int(part)
            else { return false }
            return value <= 255
        }
    }

    /// An IPv6 address as hex groups and colons (the channel compares it as written, lower-cased).
    static func isIPv6(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.contains(UInt8(ascii: ":")), bytes.count <= 45 else { return false }
        return bytes.allSatisfy {
            (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) || $0 == 0x3A
                || $0 == 0x2E
        }
    }
}
