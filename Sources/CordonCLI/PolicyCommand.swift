import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy`: inspect, check, validate, install and sign security policies.
struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Inspect the policy in force, explain decisions, and validate, install and sign policy files.",
        discussion: """
            Policy files are JSON (schema "cordon.policy.v1"), read from the admin directory \
            (/etc/cordon/policy.d) and the user directory ($XDG_CONFIG_HOME/cordon/policy.d); the most \
            restrictive value wins. `validate`, `keygen` and `sign` work without cordond.
            """,
        subcommands: [
            PolicyStatusCommand.self, PolicyShowCommand.self, PolicyExplainCommand.self, PolicyCheckCommand.self,
            PolicyValidateCommand.self, PolicyPushCommand.self, PolicyReloadCommand.self, PolicyKeygenCommand.self,
            PolicySignCommand.self, PolicySchemaCommand.self,
        ])
}

extension PolicyAction: ExpressibleByArgument {}

/// The question asked by `policy check` and `policy explain`: an action, its target and context.
struct DecisionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The action to decide.", valueName: "action"))
    var action: PolicyAction

    @Option(
        help: ArgumentHelp(
            "The other app's id (send, receive, paste), or the destination path (save).", valueName: "target"))
    var target: String?

    @Option(help: ArgumentHelp("The content's MIME type or file name / extension (documents).", valueName: "type"))
    var contentType: String?

    @Option(help: ArgumentHelp("The content's length in characters (pasteboard).", valueName: "n"))
    var length: Int?

    func validate() throws {
        if let length, length < 0 { throw ValidationError("--length must be 0 or more") }
    }

    /// The wire `context`: `contentType` and `length`, as strings.
    var context: [String: String] {
        var context: [String: String] = [:]
        if let contentType { context["contentType"] = contentType }
        if let length { context["length"] = String(length) }
        return context
    }
}

/// How decisions print.
enum DecisionFormat {
    /// `allowed` or `denied`.
    static func verdict(_ decision: CordonDecision) -> String {
        decision.allowed ? "allowed" : "denied"
    }

    /// The decision's lines: verdict, action, reason, obligation and rules.
    static func lines(_ decision: CordonDecision, appId: String? = nil) -> [String] {
        var rows: [[String]] = [
            ["decision:", verdict(decision)],
            ["action:", decision.action.rawValue + (appId.map { " by \($0)" } ?? "")],
            ["reason:", decision.reason],
        ]
        if let truncateTo = decision.truncateTo {
            rows.append(["obligation:", "truncate the content to \(Format.count(truncateTo, "character"))"])
        }
        rows.append(["rules:", decision.rules.isEmpty ? "-" : decision.rules.joined(separator: ", ")])
        return Format.table(rows)
    }
}
