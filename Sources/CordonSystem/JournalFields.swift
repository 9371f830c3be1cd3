import Logging

/// Encodes one swift-log record as journald fields (`KEY=value`), a pure function so the
/// encoding is tested without a journal.
public enum JournalFields {
    /// The journal's syslog identifier for the agent.
    public static let syslogIdentifier = "cordond"

    /// The syslog priority (0 emerg … 7 debug) of a swift-log level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// A metadata key as a journal field name: upper-cased, every character outside `[A-Z0-9_]`
    /// replaced by `_`, leading underscores (reserved for trusted fields) dropped, a leading
    /// digit prefixed with `F`, at most 64 characters. Nil when nothing usable remains.
    public static func fieldName(_ key: String) -> String? {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9", "_": return Character(scalar)
                default: return "_"
                }
            })
        while name.hasPrefix("_") { name.removeFirst() }
        if let first = name.first, first.isNumber { name = "F" + name }
        guard !name.isEmpty else { return nil }
        return String(name.prefix(64))
    }

    /// The fields that the handler sets itself; metadata never overrides them.
    static let reserved: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
        "LOGGER", "SOURCE",
    ]

    /// The fields of one record, in a stable order: the handler's own, then metadata sorted by key.
    public static func encode(
        level: Logger.Level, message: String, metadata: Logger.Metadata, label: String, source: String,
        file: String, function: String, line: UInt
    ) -> [(name: String, value: String)] {
        let flat = metadata.mapValues { "\($0)" }
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", message), ("PRIORITY", String(priority(level))), ("SYSLOG_IDENTIFIER", syslogIdentifier),
        ]
        if let id = JournalMessageID.classify(message: message, metadata: flat) {
            fields.append(("MESSAGE_ID", id.rawValue))
        }
        fields += [
            ("CODE_FILE", file), ("CODE_LINE", String(line)), ("CODE_FUNC", function), ("LOGGER", label),
            ("SOURCE", source),
        ]
        var seen = reserved
        for key in flat.keys.sorted() {
            guard key != "messageId", let name = fieldName(key), !seen.contains(name), let value = flat[key] else {
                continue
            }
            seen.insert(name)
            fields.append((name, value))
        }
        return fields
    }

    /// One field as journald's native protocol takes it in an iovec: `NAME=value` (values may
    /// hold newlines; `sd_journal_sendv` frames them).
    public static func bytes(_ field: (name: String, value: String)) -> [UInt8] {
        Array(field.name.utf8) + [UInt8(ascii: "=")] + Array(field.value.utf8)
    }
}
