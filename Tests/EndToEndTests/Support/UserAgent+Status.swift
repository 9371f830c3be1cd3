import CordonProtocol
import Foundation
import Testing

extension UserAgent {
    /// The agent's status as `cordon status --json`, run as the user, prints it.
    func status() async throws -> [String: Any] {
        let status = try await cli(["status", "--json"])
        try #require(status.status == 0, "cordon status: \(status.stderr)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
    }
}

extension UserAgent {
    /// `io.cordon.Agent.GetStatus` as a program run as the user gets it.
    func agentStatus() async throws -> AgentStatus {
        try await varlink("io.cordon.Agent.GetStatus", [:], "status", as: AgentStatus.self)
    }

    /// `method` called by a program run as the user: its error (nil when it succeeded) and its
    /// parameters.
    func outcome(_ method: String, _ parameters: [String: Any] = [:]) async throws -> (
        error: String?, parameters: [String: Any]
    ) {
        let reply = try await varlink(method, parameters)
        return (reply["error"] as? String, reply["parameters"] as? [String: Any] ?? [:])
    }
}
