import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy explain`: a decision for an app and the chain of settings and files behind it.
struct PolicyExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain the decision for an app: the verdict, then each setting consulted and every file's value.",
        discussion: """
            In the chain, each consulted setting is followed by every source's value for it; `*` marks the \
            value in force (the most restrictive). The exit code is 0 whatever the verdict; use \
            `cordon policy check` to test a decision in a script.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("app"), help: ArgumentHelp("The app asking, by id.", valueName: "id"))
    var appId: String

    @OptionGroup var question: DecisionOptions

    @Flag(help: "Print the decision and the steps as a JSON object (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let explanation = try await client.explain(
            appId: appId, action: question.action, target: question.target, context: question.context)
        await client.close()
        if json {
            try Output.line(try Output.json(explanation))
            return
        }
        for line in Self.describe(explanation, appId: appId) { try Output.line(line) }
    }

    /// The human-readable lines for `explanation`.
    static func describe(_ explanation: CordonPolicyExplanation, appId: String) -> [String] {
        var lines = DecisionFormat.lines(explanation.decision, appId: appId)
        guard !explanation.steps.isEmpty else { return lines }
        lines.append("")
        lines.append("chain (* marks the value in force):")
        for step in explanation.steps {
            lines.append("\(step.setting) = \(step.value)")
            for candidate in step.candidates {
                lines.append("  \(candidate.won ? "*" : " ") \(candidate.rule) = \(candidate.value)")
            }
        }
        return lines
    }
}
