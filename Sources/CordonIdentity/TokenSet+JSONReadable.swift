import CordonProtocol

/// A session's tokens read from the form `JSONEncoder` stored them in (each `GetToken` opens its
/// session and reads them: docs/PERFORMANCE.md, "Data calls on the loop"), without `JSONDecoder`.
/// A member of the wrong kind makes it nil (the caller then decodes, which names the problem);
/// unknown members are skipped, as `Decodable` skips them.
extension TokenSet: JSONReadable {
    public init?(readingJSON node: JSONNode) {
        guard case .object(let members) = node else { return nil }
        var accessToken: String?
        var tokenType: String?
        var expiresAt: Double?
        var optional: [String: String] = [:]
        for member in members {
            switch (member.key, member.value) {
            case (_, .null): continue
            case ("accessToken", .string(let value)): accessToken = value
            case ("tokenType", .string(let value)): tokenType = value
            case ("expiresAt", .integer(let value)): expiresAt = Double(value)
            case ("expiresAt", .double(let value)): expiresAt = value
            case (let key, .string(let value)) where Self.optionalKeys.contains(key): optional[key] = value
            case (let key, _) where key == "accessToken" || key == "tokenType" || key == "expiresAt":
                return nil
            case (let key, _) where Self.optionalKeys.contains(key): return nil
            default: continue
            }
        }
        guard let accessToken, let tokenType, let expiresAt else { return nil }
        self.init(
            accessToken: accessToken, tokenType: tokenType, expiresAt: expiresAt,
            refreshToken: optional["refreshToken"], scope: optional["scope"], idToken: optional["idToken"],
            domain: optional["domain"], domainDisplayName: optional["domainDisplayName"],
            userName: optional["userName"])
    }

    private static let optionalKeys: Set = [
        "refreshToken", "scope", "idToken", "domain", "domainDisplayName", "userName",
    ]
}
