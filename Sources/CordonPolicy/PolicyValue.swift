import CordonProtocol

extension PolicyValue {
    /// An absent list restricts nothing.
    public static var unboundedDescription: String { "unrestricted" }
}

extension PolicyValue where Self: RawRepresentable, RawValue == String {
    /// The raw value, quoted as in JSON.
    public var policyDescription: String { PolicyFormat.quoted(rawValue) }
}

extension UnknownAppAction: PolicyValue {}
extension PasscodeKind: PolicyValue {}
extension MaxAttemptsAction: PolicyValue {}
extension AckTimeoutAction: PolicyValue {}
extension PasteboardLevel: PolicyValue {}
extension ShareScope: PolicyValue {}
extension SaveCopies: PolicyValue {}
extension DataAccess: PolicyValue {}
extension ConditionAction: PolicyValue {}
extension PostureAction: PolicyValue {}
extension PostureUnknown: PolicyValue {}
extension PolicyStaleAction: PolicyValue {}

extension Int: PolicyValue {
    /// The decimal number.
    public var policyDescription: String { String(self) }
    /// An absent numeric bound is no bound at all.
    public static var unboundedDescription: String { "unlimited" }
}

extension Bool: PolicyValue {
    /// `true` or `false`.
    public var policyDescription: String { self ? "true" : "false" }
}

extension Optional: PolicyValue where Wrapped: PolicyValue {
    /// The wrapped value, or the wrapped type's unbounded description (`unlimited`, `unrestricted`).
    public var policyDescription: String {
        switch self {
        case .some(let value): return value.policyDescription
        case .none: return Wrapped.unboundedDescription
        }
    }

    /// The wrapped value's JSON, or `null` for no bound.
    public var policyJSON: String { map(\.policyJSON) ?? "null" }
}

extension Set: PolicyValue where Element == String {
    /// A JSON-like list, sorted.
    public var policyDescription: String { PolicyFormat.list(self) }
}

/// The `saveLocations` allow-list: a location must match a glob of every clause.
///
/// Each document's list is one clause, so merging intersects the allowed sets exactly
/// (`["~/Documents/**"]` and `["~/Documents/work/**"]` allow only `~/Documents/work/**`)
/// instead of intersecting the glob strings.
public struct SaveLocationClauses: PolicyValue {
    /// One set of globs per distinct document list; an empty clause allows nothing.
    public var clauses: Set<Set<String>>

    /// An allow-list with these clauses.
    public init(clauses: Set<Set<String>>) { self.clauses = clauses }

    /// The clauses in canonical order (by their printed form).
    public var sortedClauses: [Set<String>] {
        clauses.sorted { PolicyFormat.list($0) < PolicyFormat.list($1) }
    }

    /// One clause prints as its list; several as `[…] and […]`.
    public var policyDescription: String {
        sortedClauses.map { PolicyFormat.list($0) }.joined(separator: " and ")
    }

    /// One clause as its list; several as a list of lists.
    public var policyJSON: String {
        let lists = sortedClauses.map { PolicyFormat.list($0) }
        return lists.count == 1 ? lists[0] : "[" + lists.joined(separator: ", ") + "]"
    }

    /// Both allow-lists must be satisfied.
    func intersecting(_ other: Self) -> Self { Self(clauses: clauses.union(other.clauses)) }
}

/// What a managed app binding requires of a registering client.
public struct ManagedAppRequirement: PolicyValue {
    /// The executables allowed to register as the app; an empty set allows none.
    public var executables: Set<String>
    /// When set, the executable's lower-case hex SHA-256 must be one of these; nil: no digest check.
    public var sha256: Set<String>?
    /// The Flatpak app ids the sandbox must verifiably be; nil: not sandboxed (a host app); an
    /// empty set (two bindings naming different ids) allows none.
    public var flatpak: Set<String>?

    /// A requirement with these executables, digests and Flatpak app ids.
    public init(executables: Set<String>, sha256: Set<String>?, flatpak: Set<String>? = nil) {
        self.executables = executables
        self.sha256 = sha256
        self.flatpak = flatpak
    }

    /// `{"executables": […], "sha256": […], "flatpak": …}` (digests and Flatpak omitted when unset).
    public var policyDescription: String {
        var text = "{\"executables\": \(PolicyFormat.list(executables))"
        if let sha256 { text += ", \"sha256\": \(PolicyFormat.list(sha256))" }
        if let flatpak { text += ", \"flatpak\": \(PolicyFormat.list(flatpak))" }
        return text + "}"
    }

    /// Two bindings of one id: both must hold, so the lists intersect (an absent digest list is no limit).
    func intersecting(_ other: Self) -> Self {
        let digests: Set<String>?
        switch (sha256, other.sha256) {
        case (.some(let lhs), .some(let rhs)): digests = lhs.intersection(rhs)
        case (.some(let lhs), .none): digests = lhs
        case (.none, let rhs): digests = rhs
        }
        let sandboxes: Set<String>?
        switch (flatpak, other.flatpak) {
        case (.some(let lhs), .some(let rhs)): sandboxes = lhs.intersection(rhs)
        case (.some(let lhs), .none): sandboxes = lhs
        case (.none, let rhs): sandboxes = rhs
        }
        return Self(executables: executables.intersection(other.executables), sha256: digests, flatpak: sandboxes)
    }
}

/// Small text and collection helpers for printing and merging effective policies.
enum PolicyFormat {
    /// `text` quoted as a JSON string.
    static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// A JSON-like list of quoted strings, sorted.
    static func list(_ items: Set<String>) -> String {
        "[" + items.sorted().map(quoted).joined(separator: ", ") + "]"
    }

    /// `token` escaped as one JSON pointer token (RFC 6901): `~` → `~0`, `/` → `~1`.
    static func pointerToken(_ token: String) -> String {
        guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
        var escaped = ""
        for character in token {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// `text` without leading and trailing ASCII spaces, tabs and line breaks.
    static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
            let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}

/// FNV-1a, 64-bit: a small, stable, dependency-free hash for version identifiers (not for security).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Mixes in `text`'s UTF-8 bytes followed by a NUL separator.
    mutating func combine(_ text: String) {
        for byte in text.utf8 { mix(byte) }
        mix(0)
    }

    private mutating func mix(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
}

/// An element of a list a policy file writes (app ids, globs, managed apps).
public protocol PolicyListElement: Sendable, Hashable {
    /// The element as JSON text.
    var listElementJSON: String { get }
}

extension String: PolicyListElement {
    /// The string, quoted.
    public var listElementJSON: String { PolicyFormat.quoted(self) }
}

extension ManagedApp: PolicyListElement {
    /// `{"id": …, "executables": […], "sha256": […]}` (digests omitted when there are none).
    public var listElementJSON: String {
        var text = "{\"id\": \(PolicyFormat.quoted(id)), \"executables\": \(executables.policyDescription)"
        if !sha256.isEmpty { text += ", \"sha256\": \(sha256.policyDescription)" }
        return text + "}"
    }
}

extension Array: PolicyValue where Element: PolicyListElement {
    /// The list as JSON, in the file's order.
    public var policyDescription: String { "[" + map(\.listElementJSON).joined(separator: ", ") + "]" }
}
