import Foundation

/// A stand-in pinentry: a shell script speaking Assuan that logs every command it receives and
/// answers each GETPIN with the next line of its pins file (percent-encoded, as pinentry does).
/// The pin `CANCEL` answers as the Cancel button does; `HANG` never answers. It also records the
/// environment it was started with and its descriptors (`descriptors`).
///
/// The script, its pins and the admin settings naming it are root's (the agent runs a pinentry
/// only from root's files); what it records goes to `records/`, the test user's when it is run as
/// that user (``init(pins:user:)``).
final class FakePinentry: Sendable {
    let directory: TemporaryDirectory
    var script: String { directory.appending("pinentry") }
    /// Where it records what it was sent, started with and as.
    var records: String { directory.appending("records") }
    var logPath: String { records + "/commands.log" }
    var environmentPath: String { records + "/environment" }
    /// Admin settings naming this pinentry (`cordond --admin-settings`, `CORDON_ADMIN_SETTINGS`).
    var adminSettingsPath: String { directory.appending("admin-settings.json") }
    var pinsPath: String { directory.appending("pins") }
    var configDirectory: String { directory.appending("config") }

    static let source = #"""
        #!/bin/sh
        dir=$(dirname "$0")
        env -0 > "$dir/records/environment"
        printf '%s' "$0" > "$dir/records/started-as"
        ls -l /proc/$$/fd > "$dir/records/descriptors" 2>&1
        echo "OK Pleased to meet you"
        count=0
        while IFS= read -r line; do
          printf '%s\n' "$line" >> "$dir/records/commands.log"
          case "$line" in
            GETPIN)
              count=$((count + 1))
              pin=$(sed -n "${count}p" "$dir/pins")
              case "$pin" in
                CANCEL) echo "ERR 83886179 Operation cancelled <Pinentry>" ;;
                HANG) exec sleep 120 ;;
                *) printf 'S PASSWORD_FROM_CACHE\n# a comment\nD %s\nOK\n' "$(printf '%s' "$pin" | sed 's/%/%25/g')" ;;
              esac ;;
            BYE) echo "OK closing connection"; exit 0 ;;
            *) echo "OK" ;;
          esac
        done
        """#

    /// With `user`, what it records goes to a directory of the test user's (``TestUser``), so that
    /// it can record when that user runs it.
    init(pins: [String] = [], user: Bool = false) throws {
        directory = try TemporaryDirectory()
        // The agent runs a pinentry only from a directory no one but root may write to.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try FileManager.default.createDirectory(atPath: records, withIntermediateDirectories: true)
        if user, let uid = Int(TestUser.uid), let gid = Int(TestUser.gid) {
            try FileManager.default.setAttributes(
                [.ownerAccountID: uid, .groupOwnerAccountID: gid], ofItemAtPath: records)
        }
        // Its own directory written in: cordond runs it through its descriptor, so "$0" is
        // /proc/self/fd/3, not its path.
        try Self.source.replacingOccurrences(of: #"dir=$(dirname "$0")"#, with: "dir='\(directory.path)'")
            .write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        try #"{"pinentry": "\#(script)"}"#.write(toFile: adminSettingsPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: adminSettingsPath)
        try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
        try setPins(pins)
    }

    /// Replaces the answers for the next command and clears the log.
    func setPins(_ pins: [String]) throws {
        try pins.map { $0 + "\n" }.joined().write(toFile: pinsPath, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// What `ls -l /proc/PID/fd` showed in the pinentry's own process, one line a descriptor.
    var descriptors: [String] {
        let text = (try? String(contentsOfFile: records + "/descriptors", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(" -> ") }.map(String.init)
    }

    /// The path it was last started through (`$0`): `/proc/self/fd/3` when run through the
    /// descriptor cordond opened and checked.
    var startedAs: String? { try? String(contentsOfFile: records + "/started-as", encoding: .utf8) }

    /// The commands received so far.
    var commands: [String] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The environment it was last started with (empty before it ran).
    var startedEnvironment: [String: String] {
        let data = FileManager.default.contents(atPath: environmentPath) ?? Data()
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return environment
    }

    /// The environment that makes `cordon` choose this pinentry (a fake display, no tty needed).
    var environment: [String: String] {
        [
            "PINENTRY": script, "DISPLAY": ":99", "CORDON_CONFIG_DIR": configDirectory,
            "CORDON_PINENTRY_TIMEOUT": "120",
        ]
    }

    /// The environment that makes `cordond` run this pinentry for `RequestUnlock`: the admin
    /// settings name it (trusted because the test runs as root), and a fake display.
    var agentEnvironment: [String: String] {
        [
            "CORDON_ADMIN_SETTINGS": adminSettingsPath, "PINENTRY": "", "DISPLAY": ":99",
            "CORDON_PINENTRY_TIMEOUT": "120",
        ]
    }

    func remove() { directory.remove() }
}
