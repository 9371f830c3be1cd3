/// The files derived from the declarations in ``PolicyKeys``: the JSON Schema of
/// `cordon.policy.v1` and the built-in default policy. `policies/cordon.policy.v1.schema.json` and
/// `policies/default.json` are these texts (`make policy-files` writes them; a test compares), so
/// the schema, the default and the parser can never disagree.
public enum PolicySchema {
    /// `policies/cordon.policy.v1.schema.json`: JSON Schema draft 2020-12.
    public static var jsonSchema: String {
        var properties: [(String, SchemaJSON)] = [
            (
                "schema",
                .object([
                    ("description", "The format and version of this file; must be \"cordon.policy.v1\"."),
                    ("const", .string(PolicyDocument.schemaIdentifier)),
                ])
            )
        ]
        for (section, _) in PolicyKeys.sections {
            properties.append(
                (
                    section.name,
                    .object([("description", .string(section.brief)), ("$ref", .string("#/$defs/" + section.name))])
                ))
        }
        properties.append(
            (
                "overrides",
                .object([
                    (
                        "description",
                        "Per-app sections, applied on top of the base policy for the listed apps only; they can only tighten."
                    ),
                    ("type", "array"), ("items", .reference("override")),
                ])
            ))
        var definitions: [(String, SchemaJSON)] = [("appId", appIdSchema)]
        for (section, settings) in PolicyKeys.sections {
            definitions.append((section.name, closedObject(section.summary, settings.map { ($0.key, $0.schema) })))
            if section == PolicyKeys.Apps.section { definitions.append(("managedApp", managedAppSchema)) }
        }
        definitions.append(("override", overrideSchema))
        return SchemaJSON.object([
            ("$schema", "https://json-schema.org/draft/2020-12/schema"),
            ("$id", "urn:cordon:schema:cordon.policy.v1"),
            ("title", "Cordon policy document (cordon.policy.v1)"),
            (
                "description",
                "One Cordon policy file. Every section is optional; all files (the embedded default, /etc/cordon/policy.d/*.json, $XDG_CONFIG_HOME/cordon/policy.d/*.json) are merged and the most restrictive value wins."
            ),
            ("type", "object"), ("additionalProperties", .bool(false)), ("required", .array(["schema"])),
            ("properties", .object(properties)), ("$defs", .object(definitions)),
        ]).text
    }

    /// `policies/default.json`: every declared setting at its built-in default, by section
    /// (absent allow-lists are left out: absent means "no allow-list").
    public static var defaultPolicy: String {
        var members: [(String, SchemaJSON)] = [("schema", .string(PolicyDocument.schemaIdentifier))]
        for (section, settings) in PolicyKeys.sections {
            let values = settings.compactMap { setting in
                setting.builtinValue.map { (setting.key, SchemaJSON.raw($0.policyJSON)) }
            }
            members.append((section.name, .object(values)))
        }
        members.append(("overrides", .array([])))
        return SchemaJSON.object(members).text
    }

    /// Every declared setting at its built-in default.
    static var defaultSettings: PolicySettingValues {
        var values = PolicySettingValues()
        for setting in PolicyKeys.all {
            if let value = setting.builtinValue { values[name: setting.name] = value }
        }
        return values
    }

    /// An object with exactly these properties.
    private static func closedObject(
        _ description: String, _ properties: [(String, SchemaJSON)], required: [String] = []
    ) -> SchemaJSON {
        var members: [(String, SchemaJSON)] = [
            ("description", .string(description)), ("type", "object"), ("additionalProperties", .bool(false)),
        ]
        if !required.isEmpty { members.append(("required", .array(required.map(SchemaJSON.string)))) }
        members.append(("properties", .object(properties)))
        return .object(members)
    }

    private static var appIdSchema: SchemaJSON {
        .object([
            (
                "description",
                "A reverse-DNS app id such as \"com.example.notes\": letters, digits, '_' and '-' in at least two dot-separated labels."
            ),
            ("type", "string"), ("pattern", .string(PolicyParser.Rules.appIdPattern)),
        ])
    }

    /// One `apps.managed` entry.
    private static var managedAppSchema: SchemaJSON {
        closedObject(
            "A managed app: its id, the executables allowed to register as it, optionally their SHA-256 digests, and the Flatpak app it runs as.",
            [
                (
                    "id",
                    .object([("description", "The app id the executables register as."), ("$ref", "#/$defs/appId")])
                ),
                (
                    "executables",
                    .object([
                        (
                            "description",
                            "Absolute paths of the executables allowed to register as this app; at least one."
                        ),
                        ("type", "array"), ("minItems", .integer(1)),
                        (
                            "items",
                            StringPattern.absolutePath.schema(description: "An absolute path (starting with '/').")
                        ),
                    ])
                ),
                (
                    "sha256",
                    .object([
                        (
                            "description",
                            "When present, the registering executable's SHA-256 digest must be one of these."
                        ),
                        ("type", "array"),
                        (
                            "items",
                            StringPattern.sha256.schema(
                                description: "A SHA-256 digest: 64 lower-case hexadecimal digits.")
                        ),
                    ])
                ),
                (
                    "flatpak",
                    .object([
                        (
                            "description",
                            "When present, the app runs in a Flatpak sandbox: the Flatpak app id it must verifiably be (its executable deployed by a system installation, every file it runs code from root's), and executables are paths as the sandbox sees them (/app/bin/...)."
                        ),
                        ("$ref", "#/$defs/appId"),
                    ])
                ),
            ], required: ["id", "executables"])
    }

    /// One `overrides[i]`: the apps, then every section that has a setting an override may set.
    private static var overrideSchema: SchemaJSON {
        var properties: [(String, SchemaJSON)] = [
            (
                "apps",
                .object([
                    ("description", "The app ids this override applies to; at least one."), ("type", "array"),
                    ("minItems", .integer(1)), ("items", .reference("appId")),
                ])
            )
        ]
        for section in PolicyKeys.overridableSections {
            let brief = section.brief.hasSuffix(".") ? String(section.brief.dropLast()) : section.brief
            properties.append(
                (
                    section.name,
                    .object([
                        ("description", .string(brief + ", for the listed apps only.")),
                        ("$ref", .string("#/$defs/" + section.name)),
                    ])
                ))
        }
        return closedObject(
            "Sections that apply only to the listed apps, on top of the base policy (most restrictive wins).",
            properties, required: ["apps"])
    }
}
