/// One policy file (`schema: "cordon.policy.v1"`), as parsed. Every key is optional: a file
/// sets only what it means to set; the effective policy merges all files, most restrictive wins.
///
/// Values are read and written by their declaration in ``PolicyKeys``:
/// `document[PolicyKeys.Lock.idleTimeoutSeconds]`, or built as
/// `PolicyDocument(PolicyKeys.Lock.idleTimeoutSeconds(60), PolicyKeys.Pasteboard.copyOut(.blocked))`.
public struct PolicyDocument: PolicySettingsHolder, Sendable, Equatable {
    /// The schema identifier; always `cordon.policy.v1` for this version.
    public var schema: String
    /// The settings of the document's base sections.
    public var settings: PolicySettingValues
    /// Per-app sections, applied (most restrictive wins) on top of the base for those apps.
    public var overrides: [PolicyOverride]

    public static let schemaIdentifier = "cordon.policy.v1"

    /// A document setting `entries` in its base sections, and `overrides`.
    public init(
        schema: String = PolicyDocument.schemaIdentifier, _ entries: PolicySettingEntry?...,
        overrides: [PolicyOverride] = []
    ) {
        self.init(schema: schema, settings: PolicySettingValues(entries), overrides: overrides)
    }

    /// A document with these base settings and overrides.
    public init(
        schema: String = PolicyDocument.schemaIdentifier, settings: PolicySettingValues, overrides: [PolicyOverride]
    ) {
        self.schema = schema
        self.settings = settings
        self.overrides = overrides
    }
}

/// `overrides[i]`: settings that apply only to the listed apps (they can only tighten).
public struct PolicyOverride: PolicySettingsHolder, Sendable, Equatable {
    /// The app ids the override applies to.
    public var apps: [String]
    /// The settings it sets for them.
    public var settings: PolicySettingValues

    /// An override of `entries` for `apps`.
    public init(apps: [String], _ entries: PolicySettingEntry?...) {
        self.init(apps: apps, settings: PolicySettingValues(entries))
    }

    /// An override of `settings` for `apps`.
    public init(apps: [String], settings: PolicySettingValues) {
        self.apps = apps
        self.settings = settings
    }
}

/// A part of a file that holds settings (a document's base, or one override).
public protocol PolicySettingsHolder {
    /// The values it sets.
    var settings: PolicySettingValues { get set }
}

extension PolicySettingsHolder {
    /// The value set for `setting`; nil when it is not set.
    public subscript<Parsed, Value>(_ setting: PolicySetting<Parsed, Value>) -> Parsed? {
        get { settings[setting] }
        set { settings[setting] = newValue }
    }
}

/// The values one part of a file (its base, or one override) sets, by setting.
public struct PolicySettingValues: Sendable, Equatable {
    /// By `section.key`.
    private(set) var values: [String: any PolicyValue] = [:]

    /// Nothing set.
    public init() {}

    /// The values of `entries` (a later entry for the same setting wins; nil entries set nothing).
    public init(_ entries: [PolicySettingEntry?]) {
        for case let entry? in entries { values[entry.name] = entry.value }
    }

    /// Whether no setting is set.
    public var isEmpty: Bool { values.isEmpty }

    /// These values with each value `top` sets in place of this one's.
    public func overlaid(with top: PolicySettingValues) -> PolicySettingValues {
        var result = self
        result.values.merge(top.values) { _, new in new }
        return result
    }

    /// The `section.key` of every setting set, in document order.
    public var names: [String] { PolicyKeys.all.map(\.name).filter { values[$0] != nil } }

    /// Whether any setting of the section named `section` is set.
    public func setsSection(_ section: String) -> Bool {
        values.keys.contains { $0.hasPrefix(section + ".") }
    }

    /// The value set for `setting`; nil when unset.
    public subscript<Parsed, Value>(_ setting: PolicySetting<Parsed, Value>) -> Parsed? {
        get { values[setting.name] as? Parsed }
        set { values[setting.name] = newValue }
    }

    /// The value set for the setting `name`, type-erased.
    subscript(name name: String) -> (any PolicyValue)? {
        get { values[name] }
        set { values[name] = newValue }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard Set(lhs.values.keys) == Set(rhs.values.keys) else { return false }
        return lhs.values.allSatisfy { name, value in
            guard let other = rhs.values[name], let setting = PolicyKeys.byName[name] else { return false }
            return setting.isEqual(value, other)
        }
    }
}

/// A managed app: its id, the executables allowed to register as it, optionally their digests.
public struct ManagedApp: Sendable, Hashable {
    public var id: String
    /// Absolute paths; a registering client's executable must be one of them.
    public var executables: [String]
    /// Lower-case hex SHA-256 digests; when present, the executable's digest must be one of them.
    public var sha256: [String]
    /// When set, the app runs in a Flatpak sandbox: the Flatpak app id it must verifiably be (its
    /// code from a system installation), and `executables` are paths as the sandbox sees them.
    public var flatpak: String?
    public init(id: String, executables: [String], sha256: [String] = [], flatpak: String? = nil) {
        self.id = id
        self.executables = executables
        self.sha256 = sha256
        self.flatpak = flatpak
    }
}
