import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy show`: every setting of the effective policy and where its value came from.
struct PolicyShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show every setting of the effective policy, its value and the rule it came from.",
        discussion: """
            A rule is FILE#POINTER: the file and the JSON pointer of the value in it (<builtin> is the \
            embedded default). When several files give the same, most restrictive value, all are listed.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the policy as a JSON object: version and settings (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let policy = try await client.effectivePolicy()
        await client.close()
        if json {
            try Output.line(try Output.json(JSONPolicy(policy)))
            return
        }
        for line in Self.describe(policy) { try Output.line(line) }
    }

    /// `--json`: the version and every setting with its value as a JSON value.
    struct JSONPolicy: Encodable {
        struct Setting: Encodable {
            var path: String
            var value: JSONValue
            var rules: [String]
        }
        var version: String
        var settings: [Setting]

        init(_ policy: CordonEffectivePolicy) {
            version = policy.version
            settings = policy.settings.map {
                // An agent too old to send JSON: the printed value, as a string.
                Setting(path: $0.path, value: $0.jsonValue ?? .string($0.value), rules: $0.rules)
            }
        }
    }

    /// The human-readable lines for `policy`.
    static func describe(_ policy: CordonEffectivePolicy) -> [String] {
        let header = ["SETTING", "VALUE", "FROM"]
        let rows = policy.settings.map { setting in
            [setting.path, setting.value, setting.rules.isEmpty ? "-" : setting.rules.joined(separator: ", ")]
        }
        return ["version: \(policy.version)"] + Format.table([header] + rows)
    }
}
