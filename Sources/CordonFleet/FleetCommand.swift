import CordonProtocol
import Crypto
import Foundation

/// One command from the admins to one machine (docs/ARCHITECTURE.md, "Fleet"): what to do, the
/// machine's own counter (each machine's commands are numbered 1, 2, 3 … and run in that order, each
/// once), when it was issued and until when it may still be accepted, and how many machines it went to.
/// A count, not their ids: a file listing every id would make issuing to n machines n files of n ids
/// (10,000 machines: 6.5 GB), and the machine needs only the count (the wipe threshold); its own id is
/// the file's `device`.
public struct FleetCommand: Sendable, Hashable, Codable {
    /// What the command does.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// Lock every container on the machine.
        case lock
        /// Erase one app's key and records in every container (`app` names it).
        case wipeApp
        /// Erase every container on the machine.
        case wipe
        /// Fetch the repository now.
        case refresh

        /// Whether it destroys data (a wipe of more than one machine needs the root's wipe threshold).
        public var destroys: Bool { self == .wipeApp || self == .wipe }
    }

    public var counter: Int
    public var kind: Kind
    /// The app a `wipeApp` erases.
    public var app: String?
    public var issued: Date
    public var expires: Date
    /// How many machines the admin sent this command to (this one included): a wipe of more than one
    /// needs the root's wipe threshold of command keys.
    public var machines: Int
    /// The admin's words, shown in the audit log.
    public var reason: String?

    public init(
        counter: Int, kind: Kind, app: String? = nil, issued: Date, expires: Date, machines: Int = 1,
        reason: String? = nil
    ) {
        self.counter = counter
        self.kind = kind
        self.app = app
        self.issued = issued
        self.expires = expires
        self.machines = machines
        self.reason = reason
    }

    /// SHA-256 of the command's canonical JSON: what a machine remembers of a command it took.
    public var digest: [UInt8] { Array(SHA256.hash(data: (try? CanonicalJSON.encode(json, role: "target")) ?? [])) }

    /// The command as the file lists it.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "counter": .int(counter), "kind": .string(kind.rawValue), "issued": .string(TUFDate.format(issued)),
            "expires": .string(TUFDate.format(expires)), "machines": .int(machines),
        ]
        if let app { members["app"] = .string(app) }
        if let reason { members["reason"] = .string(reason) }
        return .object(members)
    }

    init(_ fields: TUFFields) throws(TUFError) {
        counter = try fields.version("counter")
        let kindName = try fields.string("kind")
        guard let kind = Kind(rawValue: kindName) else {
            throw TUFError(
                .malformed, role: fields.role,
                "\(fields.path("kind")) is \"\(kindName)\", not one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        self.kind = kind
        app = fields.value["app"] == nil ? nil : try fields.text("app")
        if kind == .wipeApp, app?.isEmpty ?? true { throw fields.missing("app", "the app to wipe") }
        issued = try fields.date("issued")
        expires = try fields.date("expires")
        machines = try fields.integer("machines")
        guard machines >= 1 else {
            throw TUFError(
                .malformed, role: fields.role,
                "\(fields.path("machines")) is \(machines), not a number of machines (1 or more)")
        }
        reason = fields.value["reason"] == nil ? nil : try fields.text("reason")
    }
}

/// A machine's command file, `commands/<device id>.json`, a target of the `commands` role.
public struct FleetCommandFile: Sendable, Hashable {
    /// The target path of `device`'s commands.
    public static func path(for device: String) -> String { "commands/\(device).json" }

    public var device: String
    /// Ascending by counter.
    public var commands: [FleetCommand]

    public init(device: String, commands: [FleetCommand]) {
        self.device = device
        self.commands = commands.sorted { $0.counter < $1.counter }
    }

    /// Parses a command file's bytes (already verified as the target the `commands` role lists).
    public init(_ bytes: [UInt8]) throws(TUFError) {
        let fields = try TUFFields(CanonicalJSON.parse(bytes, role: "target"), at: "", role: "target")
        let type = try fields.string("_type")
        guard type == "cordon-commands" else {
            throw TUFError(.malformed, role: "target", "/_type is \"\(type)\", not \"cordon-commands\"")
        }
        device = try fields.text("device")
        var commands: [FleetCommand] = []
        for (index, element) in try fields.array("commands").enumerated() {
            commands.append(
                try FleetCommand(TUFFields(element, at: fields.path("commands") + "/\(index)", role: "target")))
        }
        self.commands = commands.sorted { $0.counter < $1.counter }
    }

    /// The file's canonical bytes.
    public var bytes: [UInt8] {
        let value = JSONValue.object([
            "_type": .string("cordon-commands"), "device": .string(device),
            "commands": .array(commands.map(\.json)),
        ])
        return (try? CanonicalJSON.encode(value, role: "target")) ?? []
    }
}
