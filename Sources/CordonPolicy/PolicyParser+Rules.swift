extension PolicyParser {
    /// The rules of schema `cordon.policy.v1`: keys, ranges, spellings and patterns. The JSON
    /// Schema in `policies/cordon.policy.v1.schema.json` states the same rules (a test compares them).
    enum Rules {
        static let topLevelKeys = [
            "schema", "apps", "passcode", "lock", "pasteboard", "documents", "storage", "conditions", "overrides",
        ]
        static let appsKeys = ["managed", "unknown"]
        static let managedAppKeys = ["id", "executables", "sha256"]
        static let passcodeKeys = ["minLength", "kind", "allowSimple", "maxAttempts", "onMaxAttempts"]
        static let lockKeys = [
            "idleTimeoutSeconds", "onScreenLock", "onSuspend", "reauthGraceSeconds", "discardKeyOnLock",
            "ackDeadlineMs",
            "onAckTimeout",
        ]
        static let pasteboardKeys = ["copyOut", "maxChars", "clearOnLock"]
        static let documentsKeys = [
            "sendTo", "receiveFrom", "allowedTargets", "allowedSources", "saveCopies", "saveLocations", "blockedTypes",
        ]
        static let storageKeys = ["dataAccess"]
        static let conditionsKeys = ["debuggerAttached", "preloadInjected", "executableMismatch"]
        static let overrideKeys = ["apps", "lock", "pasteboard", "documents", "storage", "conditions"]

        /// Every section's keys, for "it belongs in …" hints.
        static let sectionKeys: [(section: String, keys: [String])] = [
            ("apps", appsKeys), ("passcode", passcodeKeys), ("lock", lockKeys), ("pasteboard", pasteboardKeys),
            ("documents", documentsKeys), ("storage", storageKeys), ("conditions", conditionsKeys),
        ]

        // Inclusive ranges of the integer keys.
        static let idleTimeoutSeconds = 0...86_400
        static let reauthGraceSeconds = 0...86_400
        static let minLength = 4...64
        static let maxAttempts = 1...100
        static let ackDeadlineMs = 100...600_000
        static let maxChars = 1...10_000_000

        /// The integer keys and their ranges, for the schema comparison.
        static let ranges: [String: ClosedRange<Int>] = [
            "idleTimeoutSeconds": idleTimeoutSeconds, "reauthGraceSeconds": reauthGraceSeconds, "minLength": minLength,
            "maxAttempts": maxAttempts, "ackDeadlineMs": ackDeadlineMs, "maxChars": maxChars,
        ]

        // Enum spellings from the loosest to the strictest (the order messages and the schema use).
        static let unknownApp: [UnknownAppAction] = [.unmanaged, .refuse]
        static let passcodeKind: [PasscodeKind] = [.numeric, .alphanumeric]
        static let maxAttemptsAction: [MaxAttemptsAction] = [.lockout, .wipe]
        static let ackTimeout: [AckTimeoutAction] = [.freeze, .terminate, .disconnect, .report]
        static let pasteboardLevel: [PasteboardLevel] = [.blocked, .managed, .managedWithPasteIn, .any]
        static let shareScope: [ShareScope] = [.none, .managed, .any]
        static let saveCopies: [SaveCopies] = [.block, .allow]
        static let dataAccess: [DataAccess] = [.whenUnlocked, .afterFirstUnlock]
        static let conditionAction: [ConditionAction] = [.warn, .block, .wipe]

        /// The enum keys and their spellings, for the schema comparison.
        static let spellings: [String: [String]] = [
            "unknown": unknownApp.map(\.rawValue), "kind": passcodeKind.map(\.rawValue),
            "onMaxAttempts": maxAttemptsAction.map(\.rawValue), "onAckTimeout": ackTimeout.map(\.rawValue),
            "copyOut": pasteboardLevel.map(\.rawValue), "sendTo": shareScope.map(\.rawValue),
            "receiveFrom": shareScope.map(\.rawValue), "saveCopies": saveCopies.map(\.rawValue),
            "dataAccess": dataAccess.map(\.rawValue), "debuggerAttached": conditionAction.map(\.rawValue),
            "preloadInjected": conditionAction.map(\.rawValue), "executableMismatch": conditionAction.map(\.rawValue),
        ]

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
