extension PolicyParser {
    /// The rules of schema `cordon.policy.v1`: keys, ranges, spellings and patterns. The JSON
    /// Schema in `policies/cordon.policy.v1.schema.json` states the same rules (a test compares them).
    enum Rules {
        /// The keys of a document: `schema`, the sections ``PolicyKeys`` declares, `overrides`.
        static var topLevelKeys: [String] { ["schema"] + PolicyKeys.sections.map(\.section.name) + ["overrides"] }
        /// The keys of an `apps.managed` entry.
        static let managedAppKeys = ["id", "executables", "sha256", "flatpak"]
        /// The keys of an override: `apps`, then every section with a setting that is not global.
        static var overrideKeys: [String] { ["apps"] + PolicyKeys.overridableSections.map(\.name) }

        /// The integer settings and their ranges, by `section.key`.
        static var ranges: [String: ClosedRange<Int>] {
            Dictionary(uniqueKeysWithValues: PolicyKeys.all.compactMap { s in s.integerRange.map { (s.name, $0) } })
        }

        /// The choice settings and their spellings, by `section.key`.
        static var spellings: [String: [String]] {
            Dictionary(uniqueKeysWithValues: PolicyKeys.all.compactMap { s in s.spellings.map { (s.name, $0) } })
        }

        /// Every section's keys, for "it belongs in …" hints.
        static var sectionKeys: [(section: String, keys: [String])] {
            PolicyKeys.sections.map { ($0.section.name, $0.settings.map(\.key)) }
        }

        // The patterns as the JSON Schema writes them (ECMA 262); the checks below implement them.
        static let appIdPattern = #"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$"#
        static let absolutePathPattern = "^/"
        static let sha256Pattern = "^[0-9a-f]{64}$"
        static let blockedTypePattern =
            #"^([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*|\*)|\.[A-Za-z0-9][A-Za-z0-9_.+-]*)$"#

        /// A reverse-DNS app id: at least two dot-separated labels of ASCII letters, digits, `_`, `-`.
        static func isAppId(_ text: String) -> Bool {
            let labels = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && $0.allSatisfy(isLabelByte) }
        }

        /// An absolute path: it starts with `/`.
        static func isAbsolutePath(_ text: String) -> Bool { text.utf8.first == UInt8(ascii: "/") }

        /// A SHA-256 digest: exactly 64 lower-case hexadecimal digits.
        static func isSHA256(_ text: String) -> Bool {
            text.utf8.count == 64
                && text.utf8.allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        }

        /// A glob: any non-empty string.
        static func isGlob(_ text: String) -> Bool { !text.isEmpty }

        /// A MIME type (`type/subtype` or `type/*`) or a file extension (`.ext`).
        static func isBlockedType(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            if bytes.first == UInt8(ascii: ".") {
                return isExtension(bytes.dropFirst())
            }
            let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard parts.count == 2 else { return false }
            return isMIMEName(parts[0]) && (parts[1].elementsEqual([UInt8(ascii: "*")]) || isMIMEName(parts[1]))
        }

        /// `[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*` (RFC 6838 restricted-name, without the length limit).
        private static func isMIMEName(_ bytes: ArraySlice<UInt8>) -> Bool {
            guard let first = bytes.first, isAlphanumeric(first) else { return false }
            return bytes.dropFirst().allSatisfy { isAlphanumeric($0) || Array("!#$&^_.+-".utf8).contains($0) }
        }

        /// `[A-Za-z0-9][A-Za-z0-9_.+-]*`, the part after the dot of an extension.
        private static func isExtension(_ bytes: ArraySlice<UInt8>) -> Bool {
            guard let first = bytes.first, isAlphanumeric(first) else { return false }
            return bytes.dropFirst().allSatisfy { isAlphanumeric($0) || Array("_.+-".utf8).contains($0) }
        }

        private static func isLabelByte(_ byte: UInt8) -> Bool {
            isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }

        private static func isAlphanumeric(_ byte: UInt8) -> Bool {
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }

        private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    }
}

extension StringPattern {
    /// An absolute path: it starts with `/`.
    static let absolutePath = StringPattern(
        expected: PolicyParser.Expected.absolutePath, accepts: PolicyParser.Rules.isAbsolutePath,
        regex: PolicyParser.Rules.absolutePathPattern)
    /// A SHA-256 digest: 64 lower-case hexadecimal digits.
    static let sha256 = StringPattern(
        expected: PolicyParser.Expected.sha256, accepts: PolicyParser.Rules.isSHA256,
        regex: PolicyParser.Rules.sha256Pattern)
    /// A glob: any non-empty string.
    static let glob = StringPattern(
        expected: PolicyParser.Expected.glob, accepts: PolicyParser.Rules.isGlob, regex: nil)
    /// A MIME type or a file extension.
    static let blockedType = StringPattern(
        expected: PolicyParser.Expected.blockedType, accepts: PolicyParser.Rules.isBlockedType,
        regex: PolicyParser.Rules.blockedTypePattern)
}

extension ValueSyntax where Parsed == [ManagedApp] {
    /// A list of managed app bindings (`{id, executables, sha256}`).
    static var managedApps: Self {
        Self(
            parse: { json, validator in
                validator.list(json, of: "managed apps") { app in validator.managedApp(app) }
            },
            schema: .object([("type", "array"), ("items", .reference("managedApp"))]))
    }
}
