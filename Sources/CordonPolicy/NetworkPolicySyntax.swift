import CordonProtocol

/// What a file may write in the `network` section (docs/ARCHITECTURE.md, "Pinned channel"): the
/// parser (every problem at its JSON pointer) and the JSON Schema, from one declaration each.
extension ValueSyntax where Parsed == [NetworkPinEntry] {
    static var networkPins: Self {
        let entry = SchemaJSON.object([
            (
                "description",
                "Hosts and what their servers' chains must satisfy: at least one of pinSha256 and caCertificates."
            ),
            ("type", "object"), ("additionalProperties", .bool(false)), ("required", .array(["hosts"])),
            (
                "anyOf",
                .array([
                    .object([("required", .array(["pinSha256"]))]), .object([("required", .array(["caCertificates"]))]),
                ])
            ),
            (
                "properties",
                .object([
                    (
                        "hosts",
                        IdentitySchema.array(
                            of: StringPattern.hostPattern.schema(
                                description: "An exact host, an IP address, or \"*.example.com\" (one label)."),
                            description: "The hosts the entry governs; at least one.", nonEmpty: true)
                    ),
                    (
                        "pinSha256",
                        IdentitySchema.array(
                            of: StringPattern.pinSHA256.schema(
                                description:
                                    "Base64 of the SHA-256 of a certificate's SubjectPublicKeyInfo (RFC 7469 pin-sha256)."
                            ),
                            description: "The chain must hold a certificate with one of these keys.")
                    ),
                    (
                        "caCertificates",
                        IdentitySchema.array(
                            of: StringPattern.pemCertificate.schema(description: "One PEM CERTIFICATE block."),
                            description:
                                "The chain must be verified up to one of these (instead of the system's roots).")
                    ),
                ])
            ),
        ])
        return Self(
            parse: { json, validator in validator.list(json, of: "pins") { validator.networkPin($0) } },
            schema: IdentitySchema.array(of: entry))
    }
}

extension ValueSyntax where Parsed == ClientCertificateEntry {
    static var clientCertificate: Self {
        Self(
            parse: { json, validator in validator.clientCertificate(json) },
            // The setting's summary is the object's description (the declaration adds it).
            schema: .object([
                ("type", "object"), ("additionalProperties", .bool(false)),
                ("required", .array(["certificate", "key"])),
                (
                    "properties",
                    .object([
                        (
                            "certificate",
                            StringPattern.absolutePath.schema(
                                description: "The PEM certificate chain's path (leaf first).")
                        ),
                        ("key", StringPattern.absolutePath.schema(description: "The PEM private key's path.")),
                    ])
                ),
            ]))
    }
}

extension StringPattern {
    /// A `HostPattern`; the parser names the `HostPattern.Problem` of one it refuses.
    static let hostPattern = StringPattern(
        expected: "a host pattern", accepts: { HostPattern($0) != nil },
        regex: hostPatternRegex)
    /// `hostPattern`'s regex, as `HostPattern` decides: labels of 1-63 bytes and names of at most
    /// 253, a wildcard over at least two labels and never over a dotted-quad IPv4 address, IPv6 of
    /// at most 45 characters, no line break (Python's `$` would let a trailing one through).
    static let hostPatternRegex: String = {
        let octet = "(0|[1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5])"
        let ipv4 = octet + #"(\."# + octet + "){3}"
        let label = "[a-z0-9-]{1,63}"
        let wildcard = #"\*\.(?![^\n]{254})(?!"# + ipv4 + "$)" + label + #"(\."# + label + ")+"
        let exact = #"(?![^\n]{254})"# + label + #"(\."# + label + ")*"
        let ipv6 = #"(?![^\n]{46})[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"#
        return #"^(?![\s\S]*\n)("# + wildcard + "|" + exact + "|" + ipv6 + ")$"
    }()
    /// An RFC 7469 `pin-sha256` value: base64 (with padding) of exactly 32 bytes.
    static let pinSHA256 = StringPattern(
        expected: "base64 of a 32-byte SHA-256 digest (RFC 7469 pin-sha256: 44 characters ending in '=')",
        accepts: { NetworkRules.isPinSHA256($0) }, regex: "^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$")
    /// One PEM `CERTIFICATE` block.
    static let pemCertificate = StringPattern(
        expected: "one PEM CERTIFICATE block",
        accepts: { NetworkRules.certificateProblem($0) == nil },
        regex: #"^\s*-----BEGIN CERTIFICATE-----\s+[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----\s*$"#)
}

/// The checks of the `network` section's strings (no Foundation: the policy module is pure).
enum NetworkRules {
    static let begin = "-----BEGIN CERTIFICATE-----"
    static let end = "-----END CERTIFICATE-----"

    /// Base64 with padding that decodes to exactly 32 bytes (the unused low bits zero).
    static func isPinSHA256(_ text: String) -> Bool {
        decodedLength(Array(text.utf8)) == 32
    }

    /// Why `text` is not one PEM `CERTIFICATE` block (a syntactic check: the header and footer, a
    /// body of base64 lines); nil when it is. Never repeats the text: a wrong paste may be a key.
    static func certificateProblem(_ text: String) -> String? {
        let trimmed = PolicyFormat.trimmed(text)
        if trimmed.contains("PRIVATE KEY") {
            return
                "this is a private key, not a certificate; a policy never holds private keys (its text is not repeated here)"
        }
        guard trimmed.hasPrefix(begin) else {
            return "a PEM certificate starts with \"\(begin)\""
        }
        guard trimmed.hasSuffix(end), trimmed.utf8.count >= begin.utf8.count + end.utf8.count else {
            return "a PEM certificate ends with \"\(end)\""
        }
        let body = trimmed.utf8.dropFirst(begin.utf8.count).dropLast(end.utf8.count)
        if body.contains(UInt8(ascii: "-")) {
            return "holds more than one PEM block, or another label: write one certificate per string"
        }
        let base64 = body.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        guard let length = decodedLength(Array(base64)), length > 0 else {
            return "the body between the PEM lines is not base64"
        }
        return nil
    }

    /// The number of bytes standard base64 `bytes` (padded to a multiple of 4, unused bits zero)
    /// decodes to; nil when it is not such base64.
    static func decodedLength(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return nil }
        let data = bytes.dropLast(padding)
        var values: [UInt8] = []
        values.reserveCapacity(data.count)
        for byte in data {
            guard let value = sextet(byte) else { return nil }
            values.append(value)
        }
        // The last sextet's bits beyond the encoded bytes must be zero (a canonical encoding).
        if let last = values.last {
            if padding == 1, last & 0x03 != 0 { return nil }
            if padding == 2, last & 0x0F != 0 { return nil }
        }
        return bytes.count / 4 * 3 - padding
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}

extension PolicyParser.Validator {
    /// `network.pins[i]`.
    func networkPin(_ json: PositionedJSON) -> NetworkPinEntry? {
        let context = "network.pins[\(Self.networkIndex(json))]"
        guard
            let members = object(
                json, context: context, keys: ["hosts", "pinSha256", "caCertificates"], required: ["hosts"])
        else { return nil }
        let hosts = members["hosts"].flatMap {
            list($0, of: "host patterns", nonEmpty: "host pattern") { hostPattern($0) }
        }
        let pins = members["pinSha256"].flatMap { value in
            list(value, of: "pin-sha256 values") { [self] element in
                string(element, expected: StringPattern.pinSHA256.expected, where: NetworkRules.isPinSHA256)
            }
        }
        let certificates = members["caCertificates"].flatMap { value in
            list(value, of: "PEM certificates") { [self] element in certificate(element) }
        }
        guard let hosts, members["pinSha256"] == nil || pins != nil,
            members["caCertificates"] == nil || certificates != nil
        else { return nil }
        guard !(pins ?? []).isEmpty || !(certificates ?? []).isEmpty else {
            report(
                json,
                "\(PositionedJSON.quoted(context)) needs at least one \"pinSha256\" value or \"caCertificates\" "
                    + "certificate: an entry with neither would pin nothing")
            return nil
        }
        return NetworkPinEntry(hosts: hosts, pinSha256: pins ?? [], caCertificates: certificates ?? [])
    }

    /// `network.clientCertificate`.
    func clientCertificate(_ json: PositionedJSON) -> ClientCertificateEntry? {
        guard
            let members = object(
                json, context: "network.clientCertificate", keys: ["certificate", "key"],
                required: ["certificate", "key"])
        else { return nil }
        let paths = ["certificate", "key"].map { key in
            members[key].flatMap { [self] value in
                string(value, expected: StringPattern.absolutePath.expected, where: StringPattern.absolutePath.accepts)
            }
        }
        guard let certificate = paths[0], let key = paths[1] else { return nil }
        return ClientCertificateEntry(certificate: certificate, key: key)
    }

    /// One host pattern: refused with the `HostPattern.Problem`'s text.
    private func hostPattern(_ json: PositionedJSON) -> String? {
        guard case .string(let text) = json.value else {
            report(json, "expected a host pattern (a string), got \(json.shortDescription)")
            return nil
        }
        do {
            return try HostPattern(validating: text).text
        } catch {
            report(json, "\(json.shortDescription) is not a host pattern: \(error)")
            return nil
        }
    }

    /// One PEM certificate; the message never repeats the string (a wrong paste may be a private key).
    private func certificate(_ json: PositionedJSON) -> String? {
        guard case .string(let text) = json.value else {
            report(json, "expected one PEM CERTIFICATE block (a string), got \(json.shortDescription)")
            return nil
        }
        if let problem = NetworkRules.certificateProblem(text) {
            report(json, "expected one PEM CERTIFICATE block: \(problem)")
            return nil
        }
        return text
    }

    private static func networkIndex(_ element: PositionedJSON) -> Int {
        if case .element(_, let index) = element.path { return index }
        return 0
    }
}
