import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon doctor`: checks the pieces cordon needs and says how to fix what is broken.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the runtime directory, the socket, the agent and libsystemd.",
        discussion: "Prints one line per check (ok, warn or FAIL, with a hint). Exits 0 if no check failed, else 1.")

    @OptionGroup var global: GlobalOptions

    /// How long the agent has to answer.
    static let answerSeconds = 5.0

    func run() async throws {
        let socket = global.socketPath
        var checks = [
            DoctorCheck.runtimeDirectory(Self.directory(of: socket), uid: getuid()),
            DoctorCheck.socket(socket),
        ]
        let answer = await Self.askAgent(socket)
        checks.append(DoctorCheck.agent(answer))
        checks.append(DoctorCheck.libsystemd())
        if case .success(let status) = answer {
            checks.append(DoctorCheck.testMode(status))
            checks.append(DoctorCheck.kdf(status))
            if let protection = DoctorCheck.keyProtection(status) { checks.append(protection) }
            if let anchor = DoctorCheck.stateAnchor(status) { checks.append(anchor) }
            if let triggers = DoctorCheck.lockTriggers(status) { checks.append(triggers) }
            checks.append(DoctorCheck.audit(status))
            if let fleet = DoctorCheck.fleet(status) { checks.append(fleet) }
            if let policy = try? await Deadline.run(
                seconds: Self.answerSeconds,
                {
                    let client = try await CordonClient.connect(socketPath: socket)
                    defer { Task { await client.close() } }
                    return try await client.effectivePolicy()
                })
            {
                checks.append(DoctorCheck.appTrust(policy.settings))
            }
            if let posture = try? await Deadline.run(
                seconds: Self.answerSeconds,
                {
                    let client = try await CordonClient.connect(socketPath: socket)
                    defer { Task { await client.close() } }
                    return try await client.posture()
                })
            {
                checks += posture.map(DoctorCheck.posture)
            }
        }
        for check in checks { try Output.line(check.line) }
        if checks.contains(where: { $0.outcome == .fail }) { throw ExitCode(CLIExitCode.failure.rawValue) }
    }

    /// The directory part of `path`.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The agent's status, or why there is none.
    static func askAgent(_ socket: String) async -> Result<AgentStatus, CLIError> {
        do {
            return .success(
                try await Deadline.run(seconds: answerSeconds) {
                    let client = try await CordonClient.connect(socketPath: socket)
                    let status = try await client.status()
                    await client.close()
                    return status
                })
        } catch is Deadline.Expired {
            return .failure(
                CLIError(
                    "cordond did not answer within \(Format.seconds(answerSeconds))",
                    hint: "it may be hung: restart it (`systemctl --user restart cordond`)"))
        } catch {
            guard var failure = CLIError(error) else {
                return .failure(CLIError("cordond could not be asked: \(error)", hint: "restart cordond"))
            }
            if failure.code == .agentUnavailable { failure.hint = DoctorCheck.startHint }
            return .failure(failure)
        }
    }
}
