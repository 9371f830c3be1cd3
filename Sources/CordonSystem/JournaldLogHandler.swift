import CSystemd
import Foundation
import Logging

/// A swift-log handler that writes structured records to the systemd journal (`sd_journal_sendv`):
/// `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER=cordond`, `MESSAGE_ID` and every metadata key as an
/// upper-cased field (see `JournalFields`). Callers never put secrets in messages or metadata.
public struct JournaldLogHandler: LogHandler {
    /// The logger's label, stored in the `LOGGER` field.
    public let label: String
    /// The lowest level written.
    public var logLevel: Logger.Level = .info
    /// Metadata attached to every record of this logger.
    public var metadata: Logger.Metadata = [:]

    /// A handler for the logger `label`.
    public init(label: String) {
        self.label = label
    }

    /// Metadata attached to every record, by key.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    // swift-format-ignore: AllPublicDeclarationsHaveDocumentation
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let fields = JournalFields.encode(
            level: event.level, message: "\(event.message)", metadata: merged, label: label, source: event.source,
            file: event.file, function: event.function, line: event.line)
        Self.send(fields.map(JournalFields.bytes))
    }

    /// Sends encoded fields as one journal entry; returns 0 or a negative errno.
    @discardableResult
    static func send(_ fields: [[UInt8]]) -> Int32 {
        // One contiguous buffer keeps every iovec's memory alive for the call.
        let joined = fields.flatMap { $0 }
        return joined.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return -EINVAL }
            var offset = 0
            var vectors: [iovec] = []
            vectors.reserveCapacity(fields.count)
            for field in fields {
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base + offset), iov_len: field.count))
                offset += field.count
            }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}

/// Where cordond's log goes.
public enum LogTarget: String, Sendable, CaseIterable {
    /// The journal when stderr is connected to it (`JOURNAL_STREAM`), else stderr.
    case auto
    /// Always the journal (`sd_journal_sendv`).
    case journal
    /// Always plain text on stderr.
    case stderr

    /// Resolves `auto`: the journal when `JOURNAL_STREAM` names stderr's device and inode.
    public func resolved(environment: [String: String]) -> LogTarget {
        guard self == .auto else { return self }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return .stderr }
        let connected = Self.journalStreamMatches(
            environment["JOURNAL_STREAM"], device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return connected ? .journal : .stderr
    }

    /// Whether a `JOURNAL_STREAM` value (`DEVICE:INODE`, decimal) names this device and inode.
    public static func journalStreamMatches(_ value: String?, device: UInt64, inode: UInt64) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        return dev == device && ino == inode
    }
}
