/// The journal `MESSAGE_ID` of each kind of event cordond logs: a fixed 128-bit id per kind,
/// so `journalctl MESSAGE_ID=...` finds every occurrence whatever the wording.
public enum JournalMessageID: String, Sendable, CaseIterable {
    case agentStarted = "663969d58a12466c8fed9f85795f4b2b"
    case agentStopped = "4ff413f6699e4947aed2d6d91b399437"
    case keyAvailable = "4ff8c5fdde7b417c831f296df5a4872e"
    case keyUnavailable = "eef3e15c4305402eb73b5c1e6d8d2418"
    case didUnlock = "95ef87aa552144a88de7c8b4448d38cc"
    case didLock = "146f4b90ab944416ae05033cbad24516"
    case wiped = "461f7e1120d34375a6761f4352997c0d"
    case policyDidChange = "58cc5bda9e6b483bb3ee2a2edaeaac15"
    case policyApplied = "6421f5fcc78c4b928b0ae680d8c1a502"
    case policyRejected = "b1da1dd47c5645b283137e3279c92754"
    case appRegistered = "13148350d03544a584a4640ed89377ab"
    case appRefused = "5133570ce645405582ac62739857cf7f"
    case enforcement = "be24a3708d0e47d499534f103006dbe6"
    case wrongPasscode = "fd5fc0fc20734f939ac9f039c08a4b8a"
    case keyDiscarded = "d360717082c74cd3b09fe2b769f320a9"
    case connectionRefused = "868209e4a2864eb18e9f56f3ef285ff6"

    /// The id of a log record, from an explicit `messageId` metadata value (a case name), the
    /// lifecycle event `kind` of an `event` record, or the message's fixed leading words.
    public static func classify(message: String, metadata: [String: String]) -> JournalMessageID? {
        if let explicit = metadata["messageId"] {
            return allCases.first { "\($0)" == explicit }
        }
        if message == "event", let kind = metadata["kind"] {
            return eventKinds[kind]
        }
        return prefixes.first { message.hasPrefix($0.prefix) }?.id
    }

    /// Lifecycle event kinds (the wire names) to ids; `State` is a snapshot, not an event.
    static let eventKinds: [String: JournalMessageID] = [
        "EncryptionKeyAvailable": .keyAvailable, "EncryptionKeyUnavailable": .keyUnavailable,
        "DidUnlock": .didUnlock, "DidLock": .didLock, "Wiped": .wiped, "PolicyDidChange": .policyDidChange,
    ]

    /// The fixed leading words of the agent's log messages, checked in order.
    static let prefixes: [(prefix: String, id: JournalMessageID)] = [
        ("listening", .agentStarted), ("stopped", .agentStopped), ("policy applied", .policyApplied),
        ("policy file rejected", .policyRejected), ("app registered", .appRegistered),
        ("app refused by policy", .appRefused), ("app did not acknowledge", .enforcement),
        ("enforcement", .enforcement), ("wrong passcode", .wrongPasscode), ("key discarded", .keyDiscarded),
        ("connection refused", .connectionRefused),
    ]
}
