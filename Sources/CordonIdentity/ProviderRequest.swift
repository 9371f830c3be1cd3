import Foundation

/// One field of an `application/x-www-form-urlencoded` body.
public struct FormField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A POST the agent makes to a provider: its endpoint, the step it belongs to and its form body.
///
/// The body may hold a device code, an authorization code, a code verifier or a refresh token, so
/// `description` names only the endpoint, the step and the field names.
public struct ProviderRequest: Sendable, Equatable, CustomStringConvertible {
    public var url: String
    public var step: IdentityStep
    public var form: [FormField]

    public init(url: String, step: IdentityStep, form: [FormField]) {
        self.url = url
        self.step = step
        self.form = form
    }

    /// The body, form-encoded (RFC 6749 Appendix B).
    public var body: [UInt8] { Array(FormEncoding.encode(form).utf8) }

    /// The value of field `name`, if the form has it.
    public func value(_ name: String) -> String? { form.first { $0.name == name }?.value }

    public var description: String {
        "POST \(url) (\(step.rawValue): \(form.map(\.name).joined(separator: ", ")))"
    }
}

/// `application/x-www-form-urlencoded` as RFC 6749 Appendix B and the URL query use it.
public enum FormEncoding {
    /// `fields` encoded: unreserved characters as they are, everything else percent-encoded.
    public static func encode(_ fields: [FormField]) -> String {
        fields.map { escape($0.name) + "=" + escape($0.value) }.joined(separator: "&")
    }

    /// The fields of a query or form body; nil when an escape is malformed.
    public static func decode(_ text: String) -> [FormField]? {
        var fields: [FormField] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).replacingOccurrences(of: "+", with: " ")
            let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            guard let name = name.removingPercentEncoding, let value = value.removingPercentEncoding else { return nil }
            fields.append(FormField(name, value))
        }
        return fields
    }

    private static func escape(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E:
                output.append(Character(UnicodeScalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                output += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return output
    }
}

/// Where an endpoint may be: `https`, or `http` only on a loopback host (RFC 8252 §8.3 and the
/// tests' local provider). A URL with user information or a fragment is refused.
public enum EndpointRule {
    /// Why `url` is not an acceptable endpoint, or nil when it is.
    public static func problem(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return "\(url) is not an absolute URL" }
        guard components.user == nil, components.password == nil else { return "\(url) holds user information" }
        guard components.fragment == nil else { return "\(url) holds a fragment" }
        switch scheme {
        case "https": return nil
        case "http": return isLoopback(host) ? nil : "\(url) is not https and its host is not loopback"
        default: return "\(url) is not an https URL"
        }
    }

    /// Whether `host` is a loopback address (`127.0.0.0/8`, `::1` or `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "::1" || bare.lowercased() == "localhost" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether `a` and `b` have the same origin (scheme, host and port, RFC 6454).
    public static func sameOrigin(_ a: String, _ b: String) -> Bool {
        guard let first = URLComponents(string: a), let second = URLComponents(string: b) else { return false }
        func port(_ url: URLComponents) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased() && port(first) == port(second)
    }
}
