import CordonFleet
import Foundation
import Logging

/// fleetd's audit trail: every refusal, command and policy install as a journal record (for the
/// shippers admins already run) and a JSON line in `audit.log` in the state directory (0600).
public struct FleetdAudit: Sendable {
    let path: String
    let logger: Logger

    public init(stateDirectory: String, logger: Logger) {
        path = stateDirectory + "/audit.log"
        self.logger = logger
    }

    /// Records `event` (`repository.refused`, `command.accepted`, `command.refused`, `policy.installed`, …).
    public func record(_ event: String, _ fields: [String: String]) {
        var line = fields
        line["event"] = event
        line["time"] = TUFDate.format(Date())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if var data = try? encoder.encode(line) {
            data.append(UInt8(ascii: "\n"))
            if let handle = FileHandle(forWritingAtPath: path) ?? create() {
                handle.seekToEndOfFile()
                handle.write(data)
                try? handle.synchronize()
                try? handle.close()
            }
        }
        var metadata: Logger.Metadata = ["event": "\(event)"]
        for (key, value) in fields { metadata[key] = "\(value)" }
        logger.notice("\(event)", metadata: metadata)
    }

    private func create() -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        return FileHandle(forWritingAtPath: path)
    }
}
