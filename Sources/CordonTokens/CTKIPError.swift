/// The four messages of a CT-KIP exchange as RSA deploys it (RFC 4758; docs/ARCHITECTURE.md, "Tokens").
public enum CTKIPStep: String, Sendable, Equatable {
    /// The client's first request (supported algorithms).
    case clientHello = "ClientHello"
    /// The server's answer: session, RSA key, server nonce.
    case serverHello = "ServerHello"
    /// The client's encrypted nonce.
    case clientNonce = "ClientNonce"
    /// The server's last answer: the token's serial, expiry, format and MAC.
    case serverFinished = "ServerFinished"
}

/// Why a CT-KIP exchange failed, at which step. The reason never holds the activation code, a
/// nonce or the seed.
public struct CTKIPError: Error, Equatable, Sendable, CustomStringConvertible {
    public var step: CTKIPStep
    public var reason: String

    public init(_ step: CTKIPStep, _ reason: String) {
        self.step = step
        self.reason = reason
    }

    public var description: String { "\(step.rawValue): \(reason)" }
}

/// A CT-KIP provisioning URL, `<scheme>://ctkip?url=…&activationCode=…`: the server and the
/// one-time activation code.
public struct CTKIPProvisioning: Sendable, Equatable {
    /// The server's `https://` URL.
    public var url: String
    /// The activation code (a secret for one use: never logged).
    public var activationCode: String

    public init(url: String, activationCode: String) {
        self.url = url
        self.activationCode = activationCode
    }

    /// Whether `text` is a CT-KIP provisioning URL (any scheme, host `ctkip`).
    public static func matches(_ text: String) -> Bool {
        let lower = text.trimmingWhitespace().prefix(64).lowercased()
        guard let range = lower.range(of: "://") else { return false }
        return lower[range.upperBound...].hasPrefix("ctkip?") || lower[range.upperBound...].hasPrefix("ctkip/?")
    }

    /// Reads the URL; the server must be `https://` and the activation code 1 to 64 printable ASCII
    /// characters.
    public static func parse(_ text: String) throws(TokenFormatError) -> CTKIPProvisioning {
        let text = text.trimmingWhitespace()
        guard matches(text), let mark = text.firstIndex(of: "?") else {
            throw .invalidField(field: "data", reason: "a CT-KIP URL is <scheme>://ctkip?url=…&activationCode=…")
        }
        let items = try PercentEncoding.queryItems(
            text[text.index(after: mark)...], context: "ctkip", plusIsSpace: true)
        guard let url = items["url"], !url.isEmpty else {
            throw .invalidField(field: "url", reason: "the CT-KIP URL has no url parameter")
        }
        guard url.lowercased().hasPrefix("https://"), url.utf8.count <= 2048,
            !url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7e })
        else {
            throw .invalidField(field: "url", reason: "the CT-KIP server must be an https:// URL without spaces")
        }
        guard let code = items["activationcode"], !code.isEmpty else {
            throw .invalidField(field: "activationCode", reason: "the CT-KIP URL has no activationCode parameter")
        }
        guard code.utf8.count <= 64, !code.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7e })
        else {
            throw .invalidField(field: "activationCode", reason: "it is not 1 to 64 printable ASCII characters")
        }
        return CTKIPProvisioning(url: url, activationCode: code)
    }

    /// The server's host (for errors and the audit log), from `url`.
    public var server: String {
        let rest = url.dropFirst("https://".count)
        return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.split(separator: "@").last ?? "")
    }
}
