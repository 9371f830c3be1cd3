import Foundation

/// A fresh directory under /tmp (short, so socket paths fit), removed by `remove()`.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        let path = "/tmp/cordon-e2e-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        self.path = path
    }

    func appending(_ component: String) -> String { path + "/" + component }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Polls `condition` until it holds, for at most `timeout` seconds (never asserts on time).
func eventually(
    timeout: Double = 60, _ what: String, _ condition: () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if (try? await condition()) == true { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw EventuallyError(what: what)
}

struct EventuallyError: Error, CustomStringConvertible {
    let what: String
    var description: String { "condition never held: \(what)" }
}
