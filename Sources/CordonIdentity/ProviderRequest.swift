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

/// How a ``ProviderRequest``'s fields are put in its body.
public enum BodyEncoding: String, Sendable, Equatable {
    /// `application/x-www-form-urlencoded` (OAuth 2.0, RFC 6749 Appendix B).
    case form
    /// A JSON object of string members (CPA 1.0, ETSI TS 103 407).
    case json
}

/// A POST the agent makes to a provider: its endpoint, the step it belongs to and its fields, sent
/// form-encoded (OAuth 2.0) or as a JSON object (CPA); the driver sends ``body`` with the
/// ``contentType`` header.
///
/// The body may hold a device code, an authorization code, a code verifier, a refresh token or a
/// client secret, so `description` names only the endpoint, the step and the field names.
public struct ProviderRequest: Sendable, Equatable, CustomStringConvertible {
    public var url: String
    public var step: IdentityStep
    public var form: [FormField]
    public var encoding: BodyEncoding

    public init(url: String, step: IdentityStep, form: [FormField], encoding: BodyEncoding = .form) {
        self.url = url
        self.step = step
        self.form = form
        self.encoding = encoding
    }

    /// The body: form-encoded (RFC 6749 Appendix B), or a JSON object with the fields as string
    /// members in their order.
    public var body: [UInt8] {
        switch encoding {
        case .form: Array(FormEncoding.encode(form).utf8)
        case .json: JSONFields.encode(form)
        }
    }

    /// The `Content-Type` of ``body``.
    public var contentType: String {
        switch encoding {
        case .form: "application/x-www-form-urlencoded"
        case .json: "application/json"
        }
    }

    /// The value of field `name`, if the form has it.
    public func value(_ name: String) -> String? { form.first { $0.name == name }?.value }

    public var description: String {
        "POST \(url) (\(step.rawValue): \(form.map(\.name).joined(separator: ", ")))"
    }
}

/// A flat JSON object of string members (RFC 8259), as CPA requests are.
enum JSONFields {
    static func encode(_ fields: [FormField]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "{")]
        for (index, field) in fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            string(field.name, into: &output)
            output.append(UInt8(ascii: ":"))
            string(field.value, into: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `text` as a JSON string: quote, backslash and control characters escaped (RFC 8259 §7).
    private static func string(_ text: String, into output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
            case 0x00..<0x20: output += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
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
