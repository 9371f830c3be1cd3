import CordonLocking
import CordonSecrets
import CordonStore
import Foundation
import GRDB
import Testing

/// The state anchor against a counter that only goes up (the TPM's NV counter in the agent; here
/// one in memory, kept across reopenings as the TPM keeps it across reboots): every copy of the
/// database from before an event that must never be undone, and every row edited outside the
/// store, is refused (docs/ARCHITECTURE.md, "State anchor").
@Suite struct StateAnchorTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-anchor-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    /// A monotonic counter in memory, with a switch that makes it fail.
    final class Counter: MonotonicCounter {
        let state = Locked<(value: UInt64, failing: Bool)>((7, false))
        func read() throws -> UInt64 {
            try state.withLock { state in
                if state.failing { throw CocoaError(.fileReadUnknown) }
                return state.value
            }
        }
        func increment() throws {
            try state.withLock { state in
                if state.failing { throw CocoaError(.fileWriteUnknown) }
                state.value += 1
            }
        }
        var value: UInt64 { state.withLock { $0.value } }
    }

    let reference = StateAnchorReference(
        index: 0x0123_4567, authorization: Array(repeating: 1, count: 32), keyPublic: [1, 2, 3], keyPrivate: [4, 5])
    let key = Array(repeating: UInt8(0x5A), count: 32)

    func sampleKey() -> WrappedKey {
        WrappedKey(
            kdf: KDFParameters(rounds: 1 << 15, blockSize: 8, parallelism: 2, salt: Array(0..<16)),
            sealed: Array(repeating: 0xAB, count: 60), anchorIndex: reference.index)
    }

    /// A database with an anchored keystore, the anchor attached.
    func anchored(_ counter: Counter) throws -> CordonDatabase {
        let database = try CordonDatabase(path: path)
        try database.saveWrappedKey(
            sampleKey(), now: 1, anchor: StateAnchor(reference: reference, counter: counter, key: key))
        return database
    }

    func reopen(_ counter: Counter) throws -> (CordonDatabase, StateAnchorError?) {
        let database = try CordonDatabase(path: path)
        do throws(StateAnchorError) {
            try database.attach(StateAnchor(reference: reference, counter: counter, key: key))
            return (database, nil)
        } catch {
            return (database, error)
        }
    }

    func execute(_ sql: String) throws {
        try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }
    }

    @Test func eventsThatMustNeverGoBackRaiseTheCounterAndTheStateReopens() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        let database = try anchored(counter)
        #expect(database.attachedAnchor?.reference == reference)
        try database.saveAttempts(count: 1, lastFailureAt: 10)
        try database.recordPolicySerial(name: "base", serial: 2, now: 11)
        _ = try database.rotateAppGeneration(appId: "com.example.notes", now: 12)
        // A reset of the attempts and a re-wrapped key are MAC'd but raise nothing.
        try database.saveAttempts(count: 0, lastFailureAt: nil)
        try database.saveWrappedKey(sampleKey(), now: 13)
        #expect(counter.value == 10)
        let (reopened, problem) = try reopen(counter)
        #expect(problem == nil)
        #expect(reopened.anchorProblem == nil)
        #expect(try reopened.policySerials() == ["base": 2])
    }

    @Test func aCopyFromBeforeAnEventIsRefusedAsRolledBack() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        let database = try anchored(counter)
        try database.recordPolicySerial(name: "base", serial: 1, now: 1)
        let copy = directory + "/copy.sqlite"
        try DatabaseQueue(path: path).backup(to: DatabaseQueue(path: copy))
        try database.recordPolicySerial(name: "base", serial: 2, now: 2)
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: copy, toPath: path)
        let (reopened, problem) = try reopen(counter)
        #expect(problem == .rolledBack(stored: 8, counter: 9))
        // Refused: no write of the state goes through, and the store says why.
        #expect(reopened.anchorProblem == .rolledBack(stored: 8, counter: 9))
        #expect(throws: StateAnchorError.rolledBack(stored: 8, counter: 9)) {
            try reopened.saveAttempts(count: 0, lastFailureAt: nil)
        }
    }

    @Test(arguments: [
        "UPDATE attempts SET failed = 0", "DELETE FROM policySerial", "UPDATE token SET counter = 5",
        "DELETE FROM appGeneration", "UPDATE stateAnchor SET value = value + 1",
        "UPDATE keystore SET anchorIndex = NULL",
    ])
    func anEditedRowIsRefusedAsTampered(_ edit: String) throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        let database = try anchored(counter)
        try database.saveAttempts(count: 2, lastFailureAt: 5)
        try database.recordPolicySerial(name: "base", serial: 3, now: 1)
        _ = try database.rotateAppGeneration(appId: "com.example.notes", now: 1)
        let token = StoredToken(
            serial: "h1", kind: "hotp", nickname: "h", digits: 6, interval: 0, pinMode: "none", expiry: nil,
            generation: 0, sealed: [1, 2, 3], counter: 6, importedAt: 1)
        #expect(try database.insertToken(token, maximum: 10) == .inserted)
        try execute(edit)
        // Caught while the store runs, at the next write of the state...
        #expect(throws: StateAnchorError.tampered) { try database.saveAttempts(count: 3, lastFailureAt: 6) }
        // ...and at the next start.
        let (_, problem) = try reopen(counter)
        #expect(problem == .tampered)
    }

    @Test func aDeletedAnchorIsMissing() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        _ = try anchored(counter)
        try execute("DELETE FROM stateAnchor")
        #expect(try reopen(counter).1 == .missing)
    }

    @Test func aCounterRaiseACrashCutShortIsCaughtUpAtTheNextStart() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        let database = try anchored(counter)
        counter.state.withLock { $0.failing = true }
        // Stored and MAC'd; the counter's raise failed (the agent answers the error).
        #expect(throws: StateAnchorError.self) { try database.saveAttempts(count: 1, lastFailureAt: 1) }
        counter.state.withLock { $0.failing = false }
        #expect(counter.value == 7)
        let (reopened, problem) = try reopen(counter)
        #expect(problem == nil)
        #expect(counter.value == 8)
        #expect(try reopened.loadAttempts().count == 1)
    }

    @Test func aFullWipeRaisesTheCounterSoTheCopyFromBeforeIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        let database = try anchored(counter)
        let copy = directory + "/copy.sqlite"
        try DatabaseQueue(path: path).backup(to: DatabaseQueue(path: copy))
        try database.eraseKeystore()
        #expect(counter.value == 8)
        // The wiped container keeps its anchor for the next `Initialize`.
        #expect(try reopen(counter).1 == nil)
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: copy, toPath: path)
        #expect(try reopen(counter).1 == .rolledBack(stored: 7, counter: 8))
    }

    @Test func aWipeOfARefusedStateDropsTheAnchor() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = Counter()
        _ = try anchored(counter)
        try execute("UPDATE keystore SET version = 9")
        let (reopened, problem) = try reopen(counter)
        #expect(problem == .tampered)
        try reopened.eraseKeystore()
        #expect(reopened.anchorProblem == nil)
        #expect(try reopened.loadAnchorReference() == nil)
        #expect(try reopened.loadWrappedKey() == nil)
    }

    @Test func withoutAnAnchorWritesArePlain() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        try database.saveAttempts(count: 1, lastFailureAt: 1)
        try execute("UPDATE attempts SET failed = 0")
        // No TPM: an edit goes unnoticed (docs/THREAT-MODEL.md says so).
        #expect(try database.loadAttempts().count == 0)
        try database.saveAttempts(count: 1, lastFailureAt: 2)
        #expect(database.anchorProblem == nil)
    }
}
