import CordonFleet
import Foundation

/// What fleetd keeps between polls, one file written atomically (`state.json` in the state
/// directory, 0600): the trusted metadata as served, the clock ratchet, the timestamp's ETag, every
/// command taken (counter → digest), the policy files it installed, and the last error.
public struct FleetdState: Codable, Sendable, Equatable {
    /// Trusted metadata by file name (`root.json`, `timestamp.json`, …).
    public var files: [String: Data] = [:]
    public var verifiedAt: Date?
    public var etag: String?
    /// Commands taken (handed on or refused), by counter: the command's digest in hex.
    public var taken: [Int: String] = [:]
    /// Policy files fleetd installed, by file name: their SHA-256 in hex.
    public var installed: [String: String] = [:]
    /// SHA-256 of the last command file processed.
    public var commandFile: String?
    public var lastError: String?
    /// When a report was last sent, and what it said (a report is sent when that changes).
    public var reported: String?

    public init() {}

    /// The state in `directory`, or a fresh one.
    public static func load(from directory: String) throws(FleetdError) -> FleetdState {
        let path = directory + "/state.json"
        guard let data = FileManager.default.contents(atPath: path) else { return FleetdState() }
        do {
            return try JSONDecoder().decode(FleetdState.self, from: data)
        } catch {
            throw FleetdError(
                "\(path) is damaged: \(error)", hint: "move it away; fleetd starts again from the shipped root")
        }
    }

    /// Writes the state to `directory` atomically.
    public func save(to directory: String) throws(FleetdError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else {
            throw FleetdError("cannot encode the state", hint: "a bug; report it")
        }
        try AtomicFile.write(Array(data), to: directory + "/state.json", mode: 0o600)
    }

    /// The trusted set: the shipped root, then what was persisted.
    public func trustedSet(shippedRoot: [UInt8]) throws(TUFError) -> TUFTrustedSet {
        let persisted = files.mapValues { Array($0) }
        var set = try TUFTrustedSet(root: persisted["root.json"] ?? shippedRoot)
        set.load(persisted: persisted, verifiedAt: verifiedAt)
        return set
    }

    /// The taken commands as `FleetCommandCheck` reads them.
    public var takenDigests: [Int: [UInt8]] { taken.compactMapValues { TUFHex.decode($0) } }
}
