import CordonProtocol
import Foundation

/// The tokens of one sign-in as a token endpoint issued them (RFC 6749 §5.1), with the time the
/// access token expires computed from `expires_in` and the injected clock.
///
/// A token response without `expires_in` is refused (``IdentityError/malformedResponse``) rather
/// than given a default lifetime: a broker that guessed would hand apps tokens the provider may
/// already have expired, and could never refresh them in time (docs/ARCHITECTURE.md, "Identity").
public struct TokenSet: Sendable, Equatable, Codable {
    public var accessToken: String
    /// `Bearer` (compared without case, RFC 6749 §5.1).
    public var tokenType: String
    /// Unix time the access token expires.
    public var expiresAt: Double
    public var refreshToken: String?
    /// The scopes granted, space-separated, when the provider says.
    public var scope: String?
    /// The OpenID Connect ID token, when the provider issued one (verified by ``IDTokenVerifier``,
    /// not by the parser).
    public var idToken: String?
    /// The CPA domain the token is for (`domain`, ETSI TS 103 407 §8.4); nil for OAuth 2.0.
    public var domain: String?
    /// The CPA domain's name to show the user (`domain_display_name`).
    public var domainDisplayName: String?
    /// The CPA user's name to show (`user_name`): present on a user token, nil on a client
    /// (anonymous) token.
    public var userName: String?

    public init(
        accessToken: String, tokenType: String, expiresAt: Double, refreshToken: String?, scope: String?,
        idToken: String?, domain: String? = nil, domainDisplayName: String? = nil, userName: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
        self.domain = domain
        self.domainDisplayName = domainDisplayName
        self.userName = userName
    }

    /// The tokens after a refresh answered `new`: a new refresh token replaces the old one
    /// (rotation, RFC 6749 §6: the client must discard the old one); without one the old one stays.
    public func refreshed(with new: TokenSet) -> TokenSet {
        var result = new
        if result.refreshToken == nil { result.refreshToken = refreshToken }
        if result.idToken == nil { result.idToken = idToken }
        return result
    }
}

/// What a token endpoint answered: tokens, or an OAuth error code (RFC 6749 §5.2, RFC 8628 §3.5).
public enum TokenAnswer: Sendable, Equatable {
    case tokens(TokenSet)
    case error(code: String, description: String?)
}

/// Reads token endpoint responses. Never puts a token or any part of the body in an error.
public enum TokenResponseParser {
    /// The largest body read from a provider (a token response is a few kilobytes).
    public static let maximumBody = 64 * 1024

    /// The answer in `body` (HTTP `status`) from `provider` at `step`, at time `now`.
    public static func parse(status: Int, body: [UInt8], provider: String, step: IdentityStep, now: Double)
        throws(IdentityError) -> TokenAnswer
    {
        let object = try JSONObject.answer(status: status, body: body, provider: provider, step: step)
        if object["error"] != nil {
            let code = try object.string("error", provider: provider, step: step)
            return .error(code: code, description: object["error_description"]?.stringValue)
        }
        if status >= 500 { throw .serverError(provider: provider, step: step, status: status) }
        guard (200..<300).contains(status) else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "HTTP status \(status) without an \"error\" member")
        }
        let accessToken = try object.string("access_token", provider: provider, step: step)
        let tokenType = try object.string("token_type", provider: provider, step: step)
        guard tokenType.lowercased() == "bearer" else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "\"token_type\" is not Bearer")
        }
        guard object["expires_in"] != nil else {
            throw .malformedResponse(provider: provider, step: step, reason: "the token has no \"expires_in\"")
        }
        let expiresIn = try object.integer("expires_in", provider: provider, step: step)
        guard expiresIn > 0, expiresIn <= 366 * 86400 else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "\"expires_in\" is \(expiresIn), not 1 to 31622400 seconds")
        }
        return .tokens(
            TokenSet(
                accessToken: accessToken, tokenType: "Bearer", expiresAt: now + Double(expiresIn),
                refreshToken: try object.optionalString("refresh_token", provider: provider, step: step),
                scope: try object.optionalString("scope", provider: provider, step: step),
                idToken: try object.optionalString("id_token", provider: provider, step: step)))
    }
}

/// A JSON object from a provider, read with typed errors naming the member (never its value).
struct JSONObject {
    let members: [String: JSONValue]

    subscript(key: String) -> JSONValue? { members[key] }

    static func parse(_ body: [UInt8], provider: String, step: IdentityStep) throws(IdentityError) -> JSONObject {
        guard body.count <= TokenResponseParser.maximumBody else {
            throw .malformedResponse(provider: provider, step: step, reason: "the body is over 64 KiB")
        }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw .malformedResponse(provider: provider, step: step, reason: "the body is not a JSON object")
        }
        return JSONObject(members: object)
    }

    /// The object in an answer with HTTP `status`: a server error (5xx) whose body is not a JSON
    /// object is ``IdentityError/serverError``, not a malformed response.
    static func answer(status: Int, body: [UInt8], provider: String, step: IdentityStep) throws(IdentityError)
        -> JSONObject
    {
        do {
            return try parse(body, provider: provider, step: step)
        } catch {
            if status >= 500 { throw .serverError(provider: provider, step: step, status: status) }
            throw error
        }
    }

    func string(_ key: String, provider: String, step: IdentityStep) throws(IdentityError) -> String {
        guard let value = try optionalString(key, provider: provider, step: step), !value.isEmpty else {
            throw .malformedResponse(provider: provider, step: step, reason: "\"\(key)\" is missing")
        }
        return value
    }

    func optionalString(_ key: String, provider: String, step: IdentityStep) throws(IdentityError) -> String? {
        guard let value = members[key], value != .null else { return nil }
        guard let string = value.stringValue else {
            throw .malformedResponse(provider: provider, step: step, reason: "\"\(key)\" is not a string")
        }
        return string
    }

    func integer(_ key: String, provider: String, step: IdentityStep) throws(IdentityError) -> Int {
        guard let value = members[key] else {
            throw .malformedResponse(provider: provider, step: step, reason: "\"\(key)\" is missing")
        }
        guard let integer = value.intValue else {
            throw .malformedResponse(provider: provider, step: step, reason: "\"\(key)\" is not an integer")
        }
        return integer
    }
}
