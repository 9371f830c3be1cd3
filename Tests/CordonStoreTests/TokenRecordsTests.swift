import CordonSecrets
import CordonStore
import Foundation
import Testing

/// The `token` table: sealed records only, duplicates and the limit refused whole, counters that
/// move once, resets that change the key generation.
@Suite struct TokenRecordsTests {
    let directory: String

    init() throws {
        directory = "/tmp/cordon-tokens-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/cordon.sqlite" }

    func sealer(generation: Int) -> RecordSealer {
        let master = SecureBytes(copying: [UInt8](repeating: 7, count: 32))
        return RecordSealer(key: KeyCustody().purposeKey(master: master, purpose: ["tokens", String(generation)]))
    }

    func record(_ serial: String, sealed: [UInt8], counter: UInt64? = nil, at time: Double = 1) -> StoredToken {
        StoredToken(
            serial: serial, kind: counter == nil ? "securid" : "hotp", nickname: "n-\(serial)", digits: 8,
            interval: counter == nil ? 60 : 0, pinMode: "pinPad", expiry: 2_082_758_400, generation: 0,
            sealed: sealed, counter: counter, importedAt: time)
    }

    @Test func theDatabaseAndItsWALHoldOnlyTheSealedSeed() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let seed = Array("SEED-0123456789abcdef-SEED".utf8)
        let sealed = try sealer(generation: 0).seal(seed, slot: ["000123456789"])
        #expect(try database.insertToken(record("000123456789", sealed: sealed), maximum: 10) == .inserted)
        for file in CordonDatabase.files(of: path) where FileManager.default.fileExists(atPath: file) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(bytes.firstRange(of: seed) == nil, "\(file) holds the seed")
            #expect(bytes.firstRange(of: Array(seed[5..<21])) == nil, "\(file) holds part of the seed")
        }
        let stored = try #require(try database.token(serial: "000123456789"))
        let opened = try sealer(generation: 0).open(stored.sealed, slot: ["000123456789"])
        #expect(opened.withUnsafeBytes { Array($0) } == seed)
        // A record copied to another serial, or opened under the next generation's key, does not open.
        #expect(throws: RecordSealError.tampered) { try sealer(generation: 0).open(stored.sealed, slot: ["999"]) }
        #expect(throws: RecordSealError.tampered) {
            try sealer(generation: 1).open(stored.sealed, slot: ["000123456789"])
        }
    }

    @Test func duplicatesAndTheLimitChangeNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.insertToken(record("1", sealed: [1], at: 1), maximum: 2) == .inserted)
        #expect(try database.insertToken(record("1", sealed: [2], at: 2), maximum: 2) == .duplicate(serial: "1"))
        #expect(try database.insertToken(record("2", sealed: [3], at: 3), maximum: 2) == .inserted)
        #expect(try database.insertToken(record("3", sealed: [4], at: 4), maximum: 2) == .limitReached(maximum: 2))
        #expect(try database.tokens().map(\.serial) == ["1", "2"])
        #expect(try database.token(serial: "1")?.sealed == [1])
    }

    /// Issue #32, item 7: a batch that would pass the limit stores none of its tokens (before, the
    /// first `maximum` were stored and the rest refused).
    @Test func aBatchIsStoredWholeOrNotAtAll() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        let eleven = (0..<11).map { record("b\($0)", sealed: [UInt8($0)], at: Double($0)) }
        #expect(try database.insertTokens(eleven, maximum: 10) == .limitReached(maximum: 10))
        #expect(try database.tokens().isEmpty)
        #expect(
            try database.insertTokens(Array(eleven[0..<3]), maximum: 10)
                == .inserted(serials: ["b0", "b1", "b2"], duplicates: []))
        // Three stored, eight new and one stored: past 10, so nothing; seven new fit.
        #expect(try database.insertTokens(Array(eleven[2..<11]), maximum: 10) == .limitReached(maximum: 10))
        #expect(try database.tokens().map(\.serial) == ["b0", "b1", "b2"])
        let fit = Array(eleven[2..<10]) + [eleven[3]]
        #expect(
            try database.insertTokens(fit, maximum: 10)
                == .inserted(serials: (3..<10).map { "b\($0)" }, duplicates: ["b2", "b3"]))
        #expect(try database.tokens().count == 10)
        #expect(try database.insertTokens([eleven[0]], maximum: 10) == .inserted(serials: [], duplicates: ["b0"]))
        #expect(try database.insertToken(eleven[10], maximum: 10) == .limitReached(maximum: 10))
        #expect(try database.integrityCheck() == "ok")
    }

    @Test func aCounterMovesOnceFromTheValueReadAndSurvivesReopening() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        _ = try database.insertToken(record("h", sealed: [9], counter: UInt64.max - 1), maximum: 10)
        #expect(try database.advanceTokenCounter(serial: "h", from: UInt64.max - 1))
        #expect(try !database.advanceTokenCounter(serial: "h", from: UInt64.max - 1))
        #expect(try CordonDatabase(path: path, readOnly: true).token(serial: "h")?.counter == UInt64.max)
        #expect(try !database.advanceTokenCounter(serial: "missing", from: 0))
    }

    @Test func renameRemoveAndResetWithANewGeneration() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try CordonDatabase(path: path)
        #expect(try database.tokenGeneration() == 0)
        _ = try database.insertToken(record("a", sealed: [1]), maximum: 10)
        _ = try database.insertToken(record("b", sealed: [2]), maximum: 10)
        #expect(try database.renameToken(serial: "a", nickname: "work"))
        #expect(try database.token(serial: "a")?.nickname == "work")
        #expect(try !database.renameToken(serial: "zz", nickname: "x"))
        #expect(try database.removeToken(serial: "b"))
        #expect(try !database.removeToken(serial: "b"))
        #expect(try database.resetTokens() == 1)
        #expect(try database.tokens().isEmpty)
        #expect(try CordonDatabase(path: path).tokenGeneration() == 1)
        #expect(try database.integrityCheck() == "ok")
    }
}
