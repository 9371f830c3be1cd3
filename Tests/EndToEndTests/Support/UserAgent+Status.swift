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
