import Foundation

/// The envelope of a varlink call: method name and call flags, parameters decoded separately.
public struct VarlinkCallHeader: Sendable, Decodable, Equatable {
    /// Fully qualified method name, `interface.Method`.
    public var method: String
    /// The caller accepts several replies (`continues`).
    public var more: Bool
    /// The caller wants no reply.
    public var oneway: Bool
    /// The caller asks to upgrade the connection to another protocol (unsupported here).
    public var upgrade: Bool

    enum CodingKeys: String, CodingKey { case method, more, oneway, upgrade }

    public init(method: String, more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        more = try container.decodeIfPresent(Bool.self, forKey: .more) ?? false
        oneway = try container.decodeIfPresent(Bool.self, forKey: .oneway) ?? false
        upgrade = try container.decodeIfPresent(Bool.self, forKey: .upgrade) ?? false
    }

    /// The interface part of `method` (everything before the last dot).
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method part of `method` (after the last dot).
    public var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }
}

/// A varlink call with typed parameters, for encoding on the client side.
public struct VarlinkCall<Parameters: Encodable & Sendable>: Encodable, Sendable {
    public var method: String
    public var parameters: Parameters?
    public var more: Bool?
    public var oneway: Bool?

    public init(method: String, parameters: Parameters?, more: Bool = false, oneway: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more ? true : nil
        self.oneway = oneway ? true : nil
    }
}

/// A varlink reply: parameters, `continues` for streamed replies, or an error name.
public struct VarlinkReply<Parameters: Codable & Sendable>: Codable, Sendable {
    public var parameters: Parameters?
    public var continues: Bool?
    public var error: String?

    public init(parameters: Parameters?, continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues ? true : nil
        self.error = error
    }
}

/// Parameters that are absent or an empty object.
public struct NoParameters: Codable, Sendable, Equatable {
    public init() {}
}
