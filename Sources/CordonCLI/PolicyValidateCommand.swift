import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy validate`: checks policy files locally, without cordond.
struct PolicyValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check policy files locally (no cordond needed); exit 0 if all are valid, 1 otherwise.",
        discussion: """
            Parses and validates each file as cordond would and prints every problem as \
            FILE:LINE:COLUMN: POINTER: MESSAGE, or `FILE: valid`. Files are checked as admin files unless \
            --user is given. Signatures are not checked here (cordond checks them against its trust \
            directory). `-` reads standard input.
            """)

    @Argument(help: ArgumentHelp("The policy files to check.", valueName: "file"))
    var files: [String]

    @Flag(help: "Check the files as user files (which may only tighten the policy).")
    var user = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one policy file") }
    }

    func run() async throws {
        var invalid = 0
        for path in files {
            let name = path == "-" ? "<stdin>" : path
            let problems: [String]
            do {
                problems = PolicyFiles.problems(in: try PolicyFiles.read(path), path: name, user: user)
            } catch {
                problems = [error.message]
            }
            if problems.isEmpty {
                try Output.line("\(name): valid")
            } else {
                invalid += 1
                for problem in problems { try Output.line(problem) }
            }
        }
        guard invalid == 0 else {
            throw CLIError(
                files.count == 1
                    ? "the policy file is invalid"
                    : "\(invalid) of \(files.count) policy files are invalid",
                hint: "fix the problems listed above (each names the line, column and JSON pointer)")
        }
    }
}
