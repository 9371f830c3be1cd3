import ArgumentParser

/// The calls `cordon-bench rtt` measures, each with the set-up it needs on its connection
/// (`RTTFixture`): a status read, a policy check, a stored record read, a token code, a cached
/// identity token.
enum RTTMethod: String, CaseIterable, Codable {
    case getStatus = "GetStatus"
    case check = "Check"
    case storageGet = "Storage.Get"
    case tokensCode = "Tokens.Code"
    case identityGetToken = "Identity.GetToken"

    /// A method by its name, with or without `io.cordon.` (`GetStatus`, `Agent.GetStatus`,
    /// `io.cordon.Storage.Get` …), any case.
    init?(name: String) {
        var name = name.trimmingCharacters(in: .whitespaces).lowercased()
        if name.hasPrefix("io.cordon.") { name.removeFirst("io.cordon.".count) }
        let aliases = ["agent.getstatus": "getstatus", "app.check": "check"]
        name = aliases[name] ?? name
        guard let method = Self.allCases.first(where: { $0.rawValue.lowercased() == name }) else { return nil }
        self = method
    }

    /// The methods named by `--method` values (each one name or a comma-separated list), in
    /// order and once each; all of them when there are none.
    static func parse(_ values: [String]) throws -> [RTTMethod] {
        var methods: [RTTMethod] = []
        for name in values.flatMap({ $0.split(separator: ",") }).map(String.init) {
            guard let method = RTTMethod(name: name) else {
                throw ValidationError(
                    "--method: unknown \(name) (one of \(allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            if !methods.contains(method) { methods.append(method) }
        }
        return methods.isEmpty ? allCases : methods
    }

    /// The app registered on the method's connection before it is measured (nil: none).
    var appId: String? {
        switch self {
        case .getStatus, .check: nil
        case .storageGet: "com.example.bench.storage"
        case .tokensCode: "com.example.bench.tokens"
        case .identityGetToken: "com.example.bench.identity"
        }
    }
}
