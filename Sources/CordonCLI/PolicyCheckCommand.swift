import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy check`: asks the policy about an action, as an unmanaged client.
struct PolicyCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Ask cordond whether an action is allowed for this (unmanaged) client; exit 0 if allowed, 1 if not.",
        discussion: """
            cordon asks as an unregistered client, so the policy's rules for unmanaged apps apply. Actions: \
            pasteboard.copy, pasteboard.paste, document.send, document.receive, document.save. To see the \
            decision for a given app and why, use `cordon policy explain --app ID`.
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var question: DecisionOptions

    @Flag(help: "Print the decision as a JSON object (sorted keys).")
    var json = false

    func validate() throws {
        if question.action == .appRegister {
            throw ValidationError(
                "app.register is decided when an app registers, not checked; "
                    + "see it with `cordon policy explain --app ID --action app.register --target EXECUTABLE`")
        }
    }

    func run() async throws {
        let client = try await global.connect()
        let decision = try await client.check(
            action: question.action, target: question.target, context: question.context)
        await client.close()
        if json {
            try Output.line(try Output.json(decision))
        } else {
            for line in DecisionFormat.lines(decision) { try Output.line(line) }
        }
        if !decision.allowed { throw CLIExitCode.failure.exitCode }
    }
}
