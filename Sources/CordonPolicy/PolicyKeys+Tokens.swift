extension PolicyKeys {
    /// `tokens`: software tokens (docs/ARCHITECTURE.md, "Tokens"): what may be imported, how many,
    /// who reads codes and when. Container-wide: the tokens are the container's, not an app's.
    public enum Tokens {
        static let section = PolicySection(
            "tokens", brief: "Software tokens: imports, limits, who reads codes and when.",
            summary:
                "Software tokens (SecurID, HOTP, TOTP): which formats may be imported, how many tokens, which apps may read codes and when.",
            perAppRefusal: "tokens belong to the whole container")
        /// The import formats allowed: lists intersect; absent allows every format.
        public static let importKinds = PolicySetting<[String], Set<String>?>(
            section, "importKinds", scope: .global,
            .strings(.tokenImportKind, noun: "import kinds", item: "an import format"), resolve: { Set($0) },
            merge: .combine(Stricter.intersect), unset: nil, builtin: nil,
            summary:
                "When present, only these formats may be imported: \"ctf\", \"sdtid\", \"otpauth\", \"otpauth-migration\", \"ctkip\" (lists of several files intersect)."
        )
        /// Whether a PIN token's code needs the PIN in every call; `true` is stricter.
        public static let pinRequired = PolicySetting<Bool, Bool>(
            section, "pinRequired", scope: .global, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: false,
            summary:
                "Whether a PINPad or key-fob token's code needs the PIN in every request (a PIN stored at import is then not used)."
        )
        /// The most tokens; the smallest wins.
        public static let maxTokens = PolicySetting<Int, Int?>(
            section, "maxTokens", scope: .global, .integer(1...100), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: 10,
            summary: "The most tokens the container holds (1 to 100; 10 when unset); the lowest value wins.")
        /// The app ids that may read codes: lists intersect; absent, no app may.
        public static let codeReaders = PolicySetting<[String], Set<String>?>(
            section, "codeReaders", scope: .global, .appIds, resolve: { Set($0) },
            merge: .combine(Stricter.intersect), unset: nil, builtin: nil,
            summary:
                "The managed apps that may read token codes (lists of several files intersect); absent, no app may.")
        /// Whether `cordon token code` may read codes (after the passcode); `false` is stricter.
        public static let cliReadsCodes = PolicySetting<Bool, Bool>(
            section, "cliReadsCodes", scope: .global, .boolean, merge: .stricter(Stricter.whenFalse), unset: true,
            builtin: true, summary: "Whether the CLI (`cordon token code`, after the passcode) may read codes.")
        /// When codes may be read; `whenUnlocked` is stricter.
        public static let dataAccess = PolicySetting<DataAccess, DataAccess>(
            section, "dataAccess", scope: .global, .choice([.whenUnlocked, .afterFirstUnlock]),
            merge: .stricter(Stricter.level), unset: .afterFirstUnlock, builtin: .whenUnlocked,
            summary:
                "\"whenUnlocked\" (codes only while the container is unlocked) or \"afterFirstUnlock\" (also while locked with the key held)."
        )
        /// Whether a CT-KIP import may be retried without certificate validation (`--insecure`,
        /// audited); `false` is stricter.
        public static let ctkipAllowInsecure = PolicySetting<Bool, Bool>(
            section, "ctkipAllowInsecure", scope: .global, .boolean, merge: .stricter(Stricter.whenFalse),
            unset: false, builtin: false,
            summary:
                "Whether a CT-KIP import may be retried without validating the server's certificate (`cordon token import --insecure`; audited)."
        )
        static let all: [any AnyPolicySetting] = [
            importKinds, pinRequired, maxTokens, codeReaders, cliReadsCodes, dataAccess, ctkipAllowInsecure,
        ]
    }
}

extension StringPattern {
    /// A token import format.
    static let tokenImportKind = StringPattern(
        expected: "an import format (\"ctf\", \"sdtid\", \"otpauth\", \"otpauth-migration\" or \"ctkip\")",
        accepts: { ["ctf", "sdtid", "otpauth", "otpauth-migration", "ctkip"].contains($0) },
        regex: "^(ctf|sdtid|otpauth|otpauth-migration|ctkip)$")
}
