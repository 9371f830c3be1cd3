import CordonProtocol

extension VarlinkClientConnection {
    /// Calls a method by its fully qualified name and decodes its single reply: for a method the
    /// SDK calls before `Method` names it (docs/ARCHITECTURE.md, "Where to add").
    func call<P: Encodable & Sendable, R: Decodable>(named method: String, _ parameters: P, returning: R.Type)
        async throws -> R
    {
        let reply = try await send(VarlinkCall(method: method, parameters: parameters))
        return try decode(R.self, from: reply)
    }
}
