import CordonSystem
import Logging
import Testing

/// The journald handler's field encoding, checked without a journal.
@Suite struct JournalFieldsTests {
    func encode(
        _ message: String, level: Logger.Level = .info, metadata: Logger.Metadata = [:]
    ) -> [String: String] {
        let fields = JournalFields.encode(
            level: level, message: message, metadata: metadata, label: "cordond", source: "CordonServer",
            file: "Agent.swift", function: "run()", line: 42)
        #expect(Set(fields.map(\.name)).count == fields.count, "no field twice")
        return Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func standardFields() {
        let fields = encode("app registered", level: .notice, metadata: ["appId": "com.example.notes"])
        #expect(fields["MESSAGE"] == "app registered")
        #expect(fields["PRIORITY"] == "5")
        #expect(fields["SYSLOG_IDENTIFIER"] == "cordond")
        #expect(fields["MESSAGE_ID"] == JournalMessageID.appRegistered.rawValue)
        #expect(fields["APPID"] == "com.example.notes")
        #expect(fields["CODE_FILE"] == "Agent.swift" && fields["CODE_LINE"] == "42" && fields["CODE_FUNC"] == "run()")
    }

    @Test(arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func priorities(level: Logger.Level, priority: Int) {
        #expect(JournalFields.priority(level) == priority)
    }

    @Test func fieldNamesFollowJournaldRules() {
        #expect(JournalFields.fieldName("appId") == "APPID")
        #expect(JournalFields.fieldName("failedAttempts") == "FAILEDATTEMPTS")
        #expect(JournalFields.fieldName("ack-deadline.ms") == "ACK_DEADLINE_MS")
        #expect(JournalFields.fieldName("_SYSTEMD_UNIT") == "SYSTEMD_UNIT")
        #expect(JournalFields.fieldName("9lives") == "F9LIVES")
        #expect(JournalFields.fieldName("__") == nil)
        #expect(JournalFields.fieldName(String(repeating: "k", count: 100))?.count == 64)
        for key in ["reason", "kind", "x y", "émoji", "_pid"] {
            let name = JournalFields.fieldName(key) ?? ""
            #expect(name.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
            #expect(!name.hasPrefix("_"))
        }
    }

    @Test func metadataNeverOverridesTheHandlersFields() {
        let fields = encode("stopped", metadata: ["message": "forged", "priority": "0", "_pid": "1"])
        #expect(fields["MESSAGE"] == "stopped")
        #expect(fields["PRIORITY"] == "6")
        #expect(fields["PID"] == "1", "a trusted-looking key loses its underscore")
        #expect(fields["MESSAGE_ID"] == JournalMessageID.agentStopped.rawValue)
    }

    @Test func lifecycleEventsHaveTheirOwnIds() {
        let unlock = encode("event", metadata: ["kind": "DidUnlock", "reason": "userRequest", "seq": "3"])
        #expect(unlock["MESSAGE_ID"] == JournalMessageID.didUnlock.rawValue)
        #expect(unlock["REASON"] == "userRequest" && unlock["KIND"] == "DidUnlock")
        #expect(encode("event", metadata: ["kind": "State"])["MESSAGE_ID"] == nil)
        #expect(
            encode("policy file rejected; it is not applied")["MESSAGE_ID"] == JournalMessageID.policyRejected.rawValue)
        #expect(encode("free text")["MESSAGE_ID"] == nil)
        let explicit = encode("something", metadata: ["messageId": "enforcement"])
        #expect(explicit["MESSAGE_ID"] == JournalMessageID.enforcement.rawValue)
        #expect(explicit["MESSAGEID"] == nil, "the selector is not a field")
    }

    @Test func messageIdsAreDistinct128BitIds() {
        let ids = JournalMessageID.allCases.map(\.rawValue)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
    }

    @Test func fieldBytesAreNameEqualsValue() {
        #expect(JournalFields.bytes(("MESSAGE", "a\nb")) == Array("MESSAGE=a\nb".utf8))
    }

    @Test func journalStreamDetection() {
        #expect(LogTarget.journalStreamMatches("8:12345", device: 8, inode: 12345))
        #expect(!LogTarget.journalStreamMatches("8:12345", device: 8, inode: 1))
        #expect(!LogTarget.journalStreamMatches(nil, device: 8, inode: 12345))
        #expect(!LogTarget.journalStreamMatches("garbage", device: 8, inode: 12345))
        #expect(LogTarget.stderr.resolved(environment: ["JOURNAL_STREAM": "1:1"]) == .stderr)
        #expect(LogTarget.journal.resolved(environment: [:]) == .journal)
        #expect(LogTarget.auto.resolved(environment: [:]) == .stderr)
    }
}
