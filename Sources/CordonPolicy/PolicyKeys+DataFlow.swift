extension PolicyKeys {
    /// `pasteboard`: where copied content may go (Intune's clipboard levels).
    public enum Pasteboard {
        static let section = PolicySection(
            "pasteboard", brief: "Where copied content may go.",
            summary: "Where copied content may go (Intune's clipboard levels).")
        /// Who may paste what managed apps copy; the strictest level wins.
        public static let copyOut = PolicySetting<PasteboardLevel, PasteboardLevel>(
            section, "copyOut", scope: .perApp, .choice([.blocked, .managed, .managedWithPasteIn, .any]),
            merge: .stricter(Stricter.level), unset: .any, builtin: .any,
            summary:
                "Who may paste what managed apps copy: \"blocked\" (nobody), \"managed\" (managed apps), \"managedWithPasteIn\" (managed apps; managed apps also accept pastes from any app) or \"any\"."
        )
        /// The most characters pasted into another app (an obligation); the smallest wins.
        public static let maxChars = PolicySetting<Int, Int?>(
            section, "maxChars", scope: .perApp, .integer(1...10_000_000), resolve: { $0 },
            merge: .stricter(Stricter.smallerBound), unset: nil, builtin: 10_000_000,
            summary: "The most characters pasted into another app (1 to 10000000); longer content is truncated.")
        /// Clear what the app copied when the container locks; `true` is stricter.
        public static let clearOnLock = PolicySetting<Bool, Bool>(
            section, "clearOnLock", scope: .perApp, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: false, summary: "Clear the managed pasteboard when the container locks.")
        static let all: [any AnyPolicySetting] = [copyOut, maxChars, clearOnLock]
    }

    /// `documents`: sending, receiving and saving documents (Intune's "send org data to" & co).
    public enum Documents {
        static let section = PolicySection(
            "documents", brief: "Sending, receiving and saving documents.",
            summary:
                "Sending, receiving and saving documents (Intune's \"send org data to\", \"receive data from\", \"save copies\")."
        )
        /// Where managed apps may send documents; the strictest scope wins.
        public static let sendTo = PolicySetting<ShareScope, ShareScope>(
            section, "sendTo", scope: .perApp, .choice([.none, .managed, .any]), merge: .stricter(Stricter.level),
            unset: .any, builtin: .any,
            summary: "Where managed apps may send documents: \"none\", \"managed\" (managed apps) or \"any\".")
        /// Where managed apps may receive documents from; the strictest scope wins.
        public static let receiveFrom = PolicySetting<ShareScope, ShareScope>(
            section, "receiveFrom", scope: .perApp, .choice([.none, .managed, .any]),
            merge: .stricter(Stricter.level), unset: .any, builtin: .any,
            summary:
                "Where managed apps may receive documents from: \"none\", \"managed\" (managed apps) or \"any\".")
        /// An allow-list of target app ids: lists intersect; absent restricts nothing.
        public static let allowedTargets = PolicySetting<[String], Set<String>?>(
            section, "allowedTargets", scope: .perApp, .appIds, resolve: { Set($0) },
            merge: .combine(Stricter.intersect), unset: nil, builtin: nil,
            summary:
                "When present, documents may be sent only to these app ids (an allow-list: lists of several files intersect)."
        )
        /// An allow-list of source app ids: lists intersect; absent restricts nothing.
        public static let allowedSources = PolicySetting<[String], Set<String>?>(
            section, "allowedSources", scope: .perApp, .appIds, resolve: { Set($0) },
            merge: .combine(Stricter.intersect), unset: nil, builtin: nil,
            summary:
                "When present, documents may be received only from these app ids (an allow-list: lists of several files intersect)."
        )
        /// Whether copies may be saved; `block` is stricter.
        public static let saveCopies = PolicySetting<SaveCopies, SaveCopies>(
            section, "saveCopies", scope: .perApp, .choice([.block, .allow]), merge: .stricter(Stricter.level),
            unset: .allow, builtin: .allow,
            summary: "Whether managed apps may save copies of documents: \"block\" or \"allow\".")
        /// An allow-list of globs, one clause per file (a location must match every clause).
        public static let saveLocations = PolicySetting<[String], SaveLocationClauses?>(
            section, "saveLocations", scope: .perApp,
            .strings(.glob, noun: "globs", item: "A glob such as \"/home/*/Documents/Work/**\"."),
            resolve: { SaveLocationClauses(clauses: [Set($0)]) }, merge: .combine(Stricter.intersect), unset: nil,
            builtin: nil,
            summary:
                "When present, copies may be saved only under paths matching one of these globs (an allow-list).")
        /// MIME types and extensions never sent, received or saved (lower-cased): lists unite.
        public static let blockedTypes = PolicySetting<[String], Set<String>>(
            section, "blockedTypes", scope: .perApp,
            .strings(
                .blockedType, noun: "MIME types or extensions",
                item: "A MIME type (\"application/pdf\", \"image/*\") or a file extension (\".exe\")."),
            resolve: { Set($0.compactMap(BlockedTypeMatcher.normalized)) }, merge: .combine { $0.union($1) },
            unset: [], builtin: [],
            summary: "Content never sent, received or saved (a block-list: lists of several files unite).")
        static let all: [any AnyPolicySetting] = [
            sendTo, receiveFrom, allowedTargets, allowedSources, saveCopies, saveLocations, blockedTypes,
        ]
    }

    /// `storage`: when app data may be read.
    public enum Storage {
        static let section = PolicySection(
            "storage", brief: "When app data may be read.", summary: "When app data may be read.")
        /// `whenUnlocked` is stricter.
        public static let dataAccess = PolicySetting<DataAccess, DataAccess>(
            section, "dataAccess", scope: .perApp, .choice([.whenUnlocked, .afterFirstUnlock]),
            merge: .stricter(Stricter.level), unset: .afterFirstUnlock, builtin: .afterFirstUnlock,
            summary:
                "\"whenUnlocked\" (only while the container is unlocked) or \"afterFirstUnlock\" (from the first unlock on, also while locked with the key held)."
        )
        /// Crypto-erase the app's data when it ignores a revocation; `true` is stricter.
        public static let wipeOnAckTimeout = PolicySetting<Bool, Bool>(
            section, "wipeOnAckTimeout", scope: .perApp, .boolean, merge: .stricter(Stricter.whenTrue), unset: false,
            builtin: false,
            summary:
                "Crypto-erase the app's stored data (selective wipe) when it misses its acknowledgement deadline after the key was revoked or the container locked."
        )
        static let all: [any AnyPolicySetting] = [dataAccess, wipeOnAckTimeout]
    }

    /// `conditions`: conditional launch, as Intune's: what a detected condition triggers.
    public enum Conditions {
        static let section = PolicySection(
            "conditions", brief: "Conditional launch: what detected conditions trigger.",
            summary: "Conditional launch: what a detected condition triggers when an app registers.")
        /// What an attached debugger triggers: wipe > block > warn.
        public static let debuggerAttached = action(
            "debuggerAttached",
            "A debugger is attached to the app: \"warn\", \"block\" (refuse the registration) or \"wipe\" (wipe the container)."
        )
        /// What an injected preload library triggers.
        public static let preloadInjected = action(
            "preloadInjected", "Libraries are injected into the app (LD_PRELOAD): \"warn\", \"block\" or \"wipe\".")
        /// What an executable that does not match its app's binding triggers.
        public static let executableMismatch = action(
            "executableMismatch",
            "The executable does not match the managed app's paths or digests: \"warn\", \"block\" or \"wipe\".")
        static let all: [any AnyPolicySetting] =
            [debuggerAttached, preloadInjected, executableMismatch] + postureSettings + [policyStale]

        /// A condition: `warn`, `block` or `wipe`, the strictest wins, default `warn`.
        private static func action(_ key: String, _ summary: String) -> PolicySetting<ConditionAction, ConditionAction>
        {
            PolicySetting(
                section, key, scope: .perApp, .choice([.warn, .block, .wipe]), merge: .stricter(Stricter.level),
                unset: .warn, builtin: .warn, summary: summary)
        }
    }
}
