import PropertyBased
import Testing

@testable import CordonPolicy

@Suite("JSON Schema: the same rules as the parser")
struct SchemaTests {
    typealias Support = ParserTestSupport
    typealias Rules = PolicyParser.Rules

    /// The schema file, parsed by the positioned parser.
    static func schema() throws -> PositionedJSON {
        let bytes = try Support.bytes(of: Support.schemaFile)
        return try PositionedJSONParser.parse(bytes).get()
    }

    /// `node`, or what its `$ref` (`#/$defs/…`) names.
    static func resolve(_ node: PositionedJSON, in root: PositionedJSON) -> PositionedJSON {
        guard case .string(let reference) = node["$ref"]?.value, reference.hasPrefix("#") else { return node }
        return root.value(at: String(reference.dropFirst())) ?? node
    }

    /// The property names of the object schema `node` (after `$ref`), in order.
    static func propertyNames(_ node: PositionedJSON, in root: PositionedJSON) -> [String] {
        guard case .object(let members) = resolve(node, in: root)["properties"]?.value else { return [] }
        return members.map(\.key)
    }

    /// Every property schema in the document, resolved, with its name.
    static func allProperties(_ root: PositionedJSON) -> [(name: String, schema: PositionedJSON)] {
        root.allNodes.flatMap { node -> [(name: String, schema: PositionedJSON)] in
            guard node.pointer.hasSuffix("/properties"), case .object(let members) = node.value else { return [] }
            return members.map { ($0.key, resolve($0.value, in: root)) }
        }
    }

    static func strings(_ node: PositionedJSON?) -> [String] {
        guard case .array(let elements) = node?.value else { return [] }
        return elements.compactMap { element in
            if case .string(let text) = element.value { return text }
            return nil
        }
    }

    /// `section.key` for a property at `/$defs/SECTION/properties/KEY`.
    static func settingName(_ property: PositionedJSON) -> String {
        let tokens = property.pointer.split(separator: "/").map(String.init)
        return tokens.count == 4 ? tokens[1] + "." + tokens[3] : property.pointer
    }

    @Test func theFileIsTheSchemaTheDeclarationsGenerate() throws {
        let onDisk = try String(decoding: Support.bytes(of: Support.schemaFile), as: UTF8.self)
        #expect(onDisk == PolicySchema.jsonSchema, "run `make policy-files` after changing a setting's declaration")
    }

    @Test func everyDeclaredSettingHasADefaultInTheSchemaUnlessItIsAnAllowList() throws {
        let root = try Self.schema()
        for setting in PolicyKeys.all {
            let node = try #require(root.value(at: "/$defs/\(setting.section.name)/properties/\(setting.key)"))
            #expect((node["default"] != nil) == (setting.builtinValue != nil), "\(setting.name)")
        }
    }

    @Test func isDraft2020_12() throws {
        let root = try Self.schema()
        #expect(root["$schema"]?.value == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(root["properties"]?["schema"]?["const"]?.value == .string(PolicyDocument.schemaIdentifier))
        #expect(Self.strings(root["required"]) == ["schema"])
    }

    @Test func everyObjectIsClosedAndEveryPropertyDescribed() throws {
        let root = try Self.schema()
        for node in root.allNodes where node["type"]?.value == .string("object") {
            #expect(node["additionalProperties"]?.value == .bool(false), "\(node.pointer) is open")
            #expect(node["description"] != nil, "\(node.pointer) has no description")
        }
        for node in root.allNodes where node.pointer.hasSuffix("/properties") {
            guard case .object(let members) = node.value else { continue }
            for member in members {
                #expect(member.value["description"] != nil, "\(member.value.pointer) has no description")
            }
        }
        for node in root.allNodes where node.pointer.hasSuffix("/items") {
            let resolved = Self.resolve(node, in: root)
            #expect(resolved["description"] != nil || node["description"] != nil, "\(node.pointer) has no description")
        }
    }

    @Test func sectionsHaveTheParsersKeys() throws {
        let root = try Self.schema()
        #expect(Self.propertyNames(root, in: root) == Rules.topLevelKeys)
        let sections: [(String, [String])] =
            Rules.sectionKeys.map { ($0.section, $0.keys) } + [
                ("managedApp", Rules.managedAppKeys), ("override", Rules.overrideKeys),
            ]
        for (name, keys) in sections {
            let node = try #require(root.value(at: "/$defs/\(name)"))
            #expect(Self.propertyNames(node, in: root) == keys, "\(name)")
        }
        #expect(Self.strings(root.value(at: "/$defs/managedApp/required")) == ["id", "executables"])
        #expect(Self.strings(root.value(at: "/$defs/override/required")) == ["apps"])
        for section in ["lock", "pasteboard", "documents", "storage", "conditions"] {
            let inOverride = try #require(root.value(at: "/$defs/override/properties/\(section)"))
            #expect(inOverride["$ref"]?.value == .string("#/$defs/\(section)"))
        }
    }

    @Test func rangesMatch() throws {
        let root = try Self.schema()
        let integers = Self.allProperties(root).filter { $0.schema["type"]?.value == .string("integer") }
        #expect(Set(integers.map { Self.settingName($0.schema) }) == Set(Rules.ranges.keys))
        for (_, schema) in integers {
            let name = Self.settingName(schema)
            let range = try #require(Rules.ranges[name])
            #expect(
                schema["minimum"]?.value == .number(PositionedJSON.Number(text: String(range.lowerBound))), "\(name)")
            #expect(
                schema["maximum"]?.value == .number(PositionedJSON.Number(text: String(range.upperBound))), "\(name)")
        }
    }

    @Test func enumsMatchInTheSameOrder() throws {
        let root = try Self.schema()
        let enums = Self.allProperties(root).filter { $0.schema["enum"] != nil }
        #expect(Set(enums.map { Self.settingName($0.schema) }) == Set(Rules.spellings.keys))
        for (_, schema) in enums {
            let name = Self.settingName(schema)
            #expect(Self.strings(schema["enum"]) == Rules.spellings[name], "\(name)")
        }
    }

    @Test func patternsAndLengthsMatch() throws {
        let root = try Self.schema()
        #expect(root.value(at: "/$defs/appId/pattern")?.value == .string(Rules.appIdPattern))
        let managed = "/$defs/managedApp/properties"
        #expect(root.value(at: "\(managed)/executables/items/pattern")?.value == .string(Rules.absolutePathPattern))
        #expect(root.value(at: "\(managed)/executables/minItems")?.value == .number(PositionedJSON.Number(text: "1")))
        #expect(root.value(at: "\(managed)/sha256/items/pattern")?.value == .string(Rules.sha256Pattern))
        let documents = "/$defs/documents/properties"
        #expect(root.value(at: "\(documents)/blockedTypes/items/pattern")?.value == .string(Rules.blockedTypePattern))
        #expect(
            root.value(at: "\(documents)/saveLocations/items/minLength")?.value
                == .number(PositionedJSON.Number(text: "1")))
        for list in ["allowedTargets", "allowedSources"] {
            #expect(root.value(at: "\(documents)/\(list)/items/$ref")?.value == .string("#/$defs/appId"))
        }
        #expect(
            root.value(at: "/$defs/override/properties/apps/minItems")?.value
                == .number(PositionedJSON.Number(text: "1")))
    }

    /// The Swift checks accept exactly what the schema's regular expressions accept.
    @Test func patternChecksAgreeWithTheRegularExpressions() async throws {
        let checks: [(String, @Sendable (String) -> Bool)] = [
            (Rules.appIdPattern, Rules.isAppId), (Rules.absolutePathPattern, Rules.isAbsolutePath),
            (Rules.sha256Pattern, Rules.isSHA256), (Rules.blockedTypePattern, Rules.isBlockedType),
        ]
        let alphabet: [Character] = ["a", "f", "g", "Z", "0", "9", ".", "/", "*", "-", "_", "+", "!", " ", "é", "~"]
        let text = Gen<Int>.value(in: 0...(alphabet.count - 1)).map { alphabet[$0] }.array(of: 0...12).map {
            String($0)
        }
        let hexText = Gen<Int>.value(in: 62...66).map { String(repeating: "a0", count: 40).prefix($0) }.map(String.init)
        for (pattern, check) in checks {
            let regex = try Regex(pattern)
            let samples = ["", "a.b", "/x", "image/*", ".exe", "a/b/c", String(repeating: "0", count: 64)]
            for sample in samples {
                #expect(
                    (try? regex.firstMatch(in: sample)) != nil ? check(sample) : !check(sample),
                    "\(pattern) on \(sample)")
            }
            await propertyCheck(count: 300, input: text) { sample in
                let matches = (try? Regex(pattern).firstMatch(in: sample)) != nil
                #expect(matches == check(sample), "\(pattern) on \(sample.debugDescription)")
            }
            await propertyCheck(count: 50, input: hexText) { sample in
                let matches = (try? Regex(pattern).firstMatch(in: sample)) != nil
                #expect(matches == check(sample), "\(pattern) on \(sample.debugDescription)")
            }
        }
    }
}
