import Foundation

/// Finds the built executables: `CORDON_BIN_DIR`, else next to the test bundle.
enum Binaries {
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["CORDON_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The runner may sit inside a bundle directory: walk up until the products are found.
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("cordond").path) {
                return candidate
            }
            candidate = candidate.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug")
    }()

    static var cordond: URL { directory.appendingPathComponent("cordond") }
    static var cordon: URL { directory.appendingPathComponent("cordon") }
    static var notes: URL { directory.appendingPathComponent("cordon-notes") }
    /// The `SecureFile` example (examples/files).
    static var files: URL { directory.appendingPathComponent("cordon-files") }
    /// The fleet service.
    static var fleetd: URL { directory.appendingPathComponent("cordon-fleetd") }
    /// The multi-call executable that is installed as `cordon`, `cordond` and `cordon-fleetd`.
    static var multicall: URL { directory.appendingPathComponent("cordon-multicall") }
}
