extension PolicyParser.Validator {
    typealias Rules = PolicyParser.Rules
    typealias Expected = PolicyParser.Expected

    /// The whole document: `schema` first, then every section ``PolicyKeys`` declares, then `overrides`.
    func document(_ json: PositionedJSON) -> PolicyDocument? {
        guard let members = object(json, context: "", keys: Rules.topLevelKeys) else { return nil }
        let identifier = PositionedJSON.quoted(PolicyDocument.schemaIdentifier)
        var schema = PolicyDocument.schemaIdentifier
        if let value = members["schema"] {
            if case .string(let text) = value.value, text == PolicyDocument.schemaIdentifier {
                schema = text
            } else {
                report(value, "expected \(identifier), got \(value.shortDescription)")
            }
        } else {
            report(json, "missing required key \"schema\"; expected \"schema\": \(identifier)")
        }
        var settings = PolicySettingValues()
        for (section, declared) in PolicyKeys.sections {
            guard let value = members[section.name] else { continue }
            read(value, section: section, settings: declared, context: section.name, into: &settings)
        }
        return PolicyDocument(
            schema: schema, settings: settings, overrides: members["overrides"].flatMap { overrides($0) } ?? [])
    }

    /// One section (also inside an override, named by `context`): each key its declaration parses.
    private func read(
        _ json: PositionedJSON, section: PolicySection, settings declared: [any AnyPolicySetting], context: String,
        inOverride: Bool = false, into settings: inout PolicySettingValues
    ) {
        guard let members = object(json, context: context, keys: declared.map(\.key)) else { return }
        for setting in declared {
            guard let value = members[setting.key] else { continue }
            if inOverride, setting.scope == .global {
                report(
                    value,
                    "\(PositionedJSON.quoted(setting.name)) cannot be set per app in "
                        + "\(PositionedJSON.quoted(context)); it applies to the whole container")
            }
            if let refusal = setting.userRefusal, source.origin == .user { report(value, refusal) }
            if let parsed = setting.parse(value, with: self) { settings[name: setting.name] = parsed }
        }
    }

    /// `apps.managed[i]`: an id, its executables and optionally their digests.
    func managedApp(_ json: PositionedJSON) -> ManagedApp? {
        let context = "apps.managed[\(Self.index(of: json))]"
        guard let members = object(json, context: context, keys: Rules.managedAppKeys, required: ["id", "executables"])
        else { return nil }
        let id = members["id"].flatMap { appId($0) }
        let executables = members["executables"].flatMap { value in
            list(value, of: "absolute paths", nonEmpty: "executable") { [self] path in
                string(path, expected: StringPattern.absolutePath.expected, where: StringPattern.absolutePath.accepts)
            }
        }
        let digests = members["sha256"].flatMap { value in
            list(value, of: "SHA-256 digests") { [self] digest in
                string(digest, expected: StringPattern.sha256.expected, where: StringPattern.sha256.accepts)
            }
        }
        let flatpak = members["flatpak"].flatMap { appId($0) }
        guard let id, let executables, members["flatpak"] == nil || flatpak != nil else { return nil }
        return ManagedApp(id: id, executables: executables, sha256: digests ?? [], flatpak: flatpak)
    }

    /// `overrides`: per-app sections; `apps` is required and non-empty.
    func overrides(_ json: PositionedJSON) -> [PolicyOverride]? {
        list(json, of: "overrides") { [self] entry in
            let context = "overrides[\(Self.index(of: entry))]"
            var special: [String: String] = [:]
            for (section, _) in PolicyKeys.sections {
                guard let reason = section.perAppRefusal else { continue }
                special[section.name] =
                    "\(PositionedJSON.quoted(section.name)) cannot be set per app in "
                    + "\(PositionedJSON.quoted(context)); \(reason)"
            }
            guard
                let members = object(
                    entry, context: context, keys: Rules.overrideKeys, required: ["apps"], specialKeys: special)
            else { return nil }
            let apps = members["apps"].flatMap { appIds($0, nonEmpty: true) }
            var settings = PolicySettingValues()
            for (section, declared) in PolicyKeys.sections {
                guard let value = members[section.name], section.name != "apps" else { continue }
                read(
                    value, section: section, settings: declared, context: context + "." + section.name,
                    inOverride: true, into: &settings)
            }
            return apps.map { PolicyOverride(apps: $0, settings: settings) }
        }
    }

    /// The index of an array element, for naming it in messages.
    private static func index(of element: PositionedJSON) -> Int {
        if case .element(_, let index) = element.path { return index }
        return 0
    }
}
