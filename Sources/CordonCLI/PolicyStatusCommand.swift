import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon policy status`: the policy version in force, its sources and directories.
struct PolicyStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the policy version in force, every source (applied or rejected) and the directories.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the status as a JSON object (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let status = try await client.policyStatus()
        await client.close()
        try Self.print(status, json: json)
    }

    /// Prints `status` as text lines or one JSON object.
    static func print(_ status: PolicyStatus, json: Bool) throws {
        if json {
            try Output.line(try Output.json(status))
        } else {
            for line in describe(status) { try Output.line(line) }
        }
    }

    /// The human-readable lines for `status`.
    static func describe(_ status: PolicyStatus) -> [String] {
        let rejected = status.sources.filter { !$0.isApplied }.count
        let none = "(none: cordond reads no policy files)"
        var lines = Format.table([
            ["version:", status.version],
            ["applied at:", Format.time(status.appliedDate)],
            ["admin directory:", status.adminDirectory.isEmpty ? none : status.adminDirectory],
            ["user directory:", status.userDirectory.isEmpty ? none : status.userDirectory],
            [
                "trust directory:",
                status.trustDirectory.isEmpty
                    ? none
                    : "\(status.trustDirectory) (\(Format.count(status.trustedKeys, "trusted key"))"
                        + (status.trustedKeys > 0 ? ": admin files must be signed)" : ")"),
            ],
            ["sources:", "\(status.sources.count - rejected) applied, \(rejected) rejected"],
        ])
        let rows = status.sources.map { source in
            [
                source.isApplied ? source.status.rawValue : source.status.rawValue.uppercased(), source.origin.rawValue,
                source.path,
                source.signedBy.map { "signed by \($0)" } ?? "",
            ]
        }
        for (index, row) in Format.table(rows).enumerated() {
            lines.append("  " + row.trimmingTrailingSpaces)
            for problem in status.sources[index].problems { lines.append("      " + problem) }
        }
        return lines
    }
}

/// `cordon policy reload`: re-reads the policy directories now.
struct PolicyReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Make cordond re-read every policy directory now, then show the resulting status.",
        discussion:
            "cordond also watches the directories and reloads by itself; this forces it, e.g. after an NFS edit.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the status as a JSON object (sorted keys).")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let status = try await client.reloadPolicy()
        await client.close()
        try PolicyStatusCommand.print(status, json: json)
    }
}

extension String {
    /// The string without trailing spaces (table rows whose last cells are empty).
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
