import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon`: the command line for Cordon's per-user agent, cordond.
struct Cordon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cordon",
        abstract: "Unlock, lock and inspect the Cordon container kept by cordond, and manage its policies.",
        discussion: """
            Talks to cordond over its varlink socket: --socket, else $CORDON_SOCKET, else \
            $XDG_RUNTIME_DIR/cordon/agent.sock. Errors go to stderr as `cordon: error: …` followed by \
            a `hint: …` line.

            Exit codes:
            \(CLIExitCode.summary)
            """,
        subcommands: [
            StatusCommand.self, InitCommand.self, UnlockCommand.self, LockCommand.self, LogoutCommand.self,
            PasswdCommand.self, WipeCommand.self, EventsCommand.self, AppsCommand.self, PolicyCommand.self,
            AuditCommand.self, DoctorCommand.self, SetupCommand.self, RunCommand.self, PasteboardCommand.self,
            PostureCommand.self, TokenCommand.self,
            StorageCommand.self,
            BiometricsCommand.self,
            LoginCommand.self, IdentityCommand.self,
            FleetGroupCommand.self,
        ])

    /// Accepted before the subcommand too (`cordon --socket PATH status`).
    @OptionGroup var global: GlobalOptions

    /// Parses `arguments` (nil: the process's own), runs, and maps every error to a message, a hint
    /// and a documented exit code.
    static func main(_ arguments: [String]?) async {
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error)
        }
    }

    /// Prints `error` and exits with its code.
    static func fail(with error: any Error) -> Never {
        if let failure = CLIError(error) {
            Output.error(failure)
            Foundation.exit(failure.code.rawValue)
        }
        let code = exitCode(for: error)
        if code == .validationFailure {
            Output.note(usageMessage(for: error))
            Foundation.exit(CLIExitCode.usage.rawValue)
        }
        if code == .success || error is ExitCode {
            exit(withError: error)  // Help, version, or an exit code a command chose.
        }
        Output.error(CLIError("\(error)", hint: "try `cordon doctor`; if the problem stays, report it"))
        Foundation.exit(CLIExitCode.failure.rawValue)
    }

    /// ArgumentParser's usage error in Cordon's shape: `cordon: error: …`, usage, `hint: …`.
    private static func usageMessage(for error: any Error) -> String {
        fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("Error: ") { return "cordon: error: " + trimmed.dropFirst("Error: ".count) }
            if trimmed.hasPrefix("See '") { return "hint: see " + trimmed.dropFirst("See ".count) }
            return String(line)
        }.joined(separator: "\n")
    }
}
