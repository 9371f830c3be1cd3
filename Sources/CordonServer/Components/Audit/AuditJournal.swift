import CordonProtocol
import CordonStore
import Foundation

/// The audit records of routine reads, copied into a shared mapping of a file before their reply
/// leaves and stored in the database by a later group commit (docs/RELIABILITY.md, "Audit"): a
/// record in the kernel's page cache survives a killed agent, so killing the agent right after a
/// read does not erase the read; only a power loss or a kernel crash before the next sync can. At
/// the next start ``recover(path:database:)`` stores what the database does not have yet.
///
/// Each line is one JSON record with the agent run's id (`run`, random per start) and its index
/// in the run (`i`); a commit records in the same transaction how far the run's journal is
/// stored (`CordonDatabase.appendAudit(_:onDisk:journal:)`), so a replay never stores a record
/// twice. The file is allocated on the disk whole (two halves of ``halfSize`` bytes, so a full
/// disk is met at the allocation, which the caller survives, never while copying) and mapped: an
/// append is a copy, not a system call (docs/PERFORMANCE.md, "The audit journal in a mapping").
/// Records fill one half, then the other once everything in it is stored (zeroed first); when
/// everything appended is stored, both are zeroed, appends start again at the beginning and the
/// mapping's pages leave the agent's memory. The file is emptied when the agent stops with
/// everything stored (``emptyIfStored()``), and by ``recover(path:database:)``. Confined to the
/// agent's loop.
final class AuditJournal {
    /// The journal's file name in the agent's data directory.
    static let fileName = "audit.journal"
    /// The bytes of each of the file's two halves: about 7,000 records, more than a group commit
    /// ever leaves waiting (`AuditLogComponent.maxQueued`).
    static let defaultHalfSize = 2 << 20

    /// This run's id.
    let run: String
    /// The bytes of each half.
    let halfSize: Int
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    /// Whether the file has its blocks (it is emptied when the agent stops with everything stored).
    private var allocated = false
    /// The half being filled, and how many of its bytes are.
    private var half = 0
    private var offset = 0
    /// How many bytes of each half were written since it was last cleared.
    private var used = [0, 0]
    /// The index of the last record in each half (0: none since it was last cleared).
    private var lastInHalf = [0, 0]
    /// The index of the last record appended.
    private(set) var lastIndex = 0
    /// Every record up to this index is stored.
    private var storedUpTo = 0

    /// Opens (creating, 0600) and maps the journal at `path`; nil when it cannot be opened or
    /// mapped, or when it holds records not yet recovered (they are never written over).
    init?(path: String, halfSize: Int = AuditJournal.defaultHalfSize) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size == 0,
            let mapping = mmap(nil, 2 * halfSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
            mapping != MAP_FAILED
        else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.mapping = mapping
        self.halfSize = halfSize
        run = (0..<16).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
    }

    deinit {
        munmap(mapping, 2 * halfSize)
        close(descriptor)
    }

    /// Appends `records`; returns the index of the last one, nil when they could not be (the
    /// disk has no room for the file, or neither half has room: the caller then stores them
    /// before its reply).
    func append(_ records: [AuditEntry]) -> Int? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * records.count)
        var index = lastIndex
        for record in records {
            index += 1
            Self.write(record, run: run, index: index, to: &bytes)
        }
        guard bytes.count <= halfSize, allocate() else { return nil }
        if offset + bytes.count > halfSize {
            // The other half is reused once every record in it is stored.
            let other = 1 - half
            guard lastInHalf[other] <= storedUpTo else { return nil }
            clear(other)
            (half, offset) = (other, 0)
        }
        bytes.withUnsafeBytes {
            UnsafeMutableRawBufferPointer(start: mapping + half * halfSize + offset, count: $0.count).copyMemory(
                from: $0)
        }
        offset += bytes.count
        used[half] = max(used[half], offset)
        lastInHalf[half] = index
        lastIndex = index
        return index
    }

    /// Every record up to `index` is stored: a half holding none newer may be reused, and when
    /// every record appended is stored, both halves are zeroed, appends start again at the
    /// beginning and the pages leave the agent's memory.
    func stored(upTo index: Int) {
        storedUpTo = max(storedUpTo, index)
        guard storedUpTo >= lastIndex, used != [0, 0] else { return }
        clear(0)
        clear(1)
        (half, offset) = (0, 0)
        _ = madvise(mapping, 2 * halfSize, Int32(MADV_DONTNEED))
    }

    /// Zeroes what `half` holds before it is written again: a line torn by a kill then ends in
    /// zeros, never in the rest of an older line that could complete it into a record nobody made.
    private func clear(_ half: Int) {
        (mapping + half * halfSize).initializeMemory(as: UInt8.self, repeating: 0, count: used[half])
        (used[half], lastInHalf[half]) = (0, 0)
    }

    /// Empties the file when every record appended is stored (the agent is stopping).
    func emptyIfStored() {
        guard allocated, storedUpTo >= lastIndex else { return }
        _ = madvise(mapping, 2 * halfSize, Int32(MADV_DONTNEED))
        if ftruncate(descriptor, 0) == 0 { allocated = false }
        (half, offset, used, lastInHalf) = (0, 0, [0, 0], [0, 0])
    }

    /// Gives the file its blocks, once: a full disk is then met here, not while copying into the
    /// mapping (where it would be a `SIGBUS`).
    private func allocate() -> Bool {
        guard !allocated else { return true }
        allocated = posix_fallocate(descriptor, 0, off_t(2 * halfSize)) == 0
        return allocated
    }

    private static func write(_ record: AuditEntry, run: String, index: Int, to bytes: inout [UInt8]) {
        var line = JSONWriter(capacity: 256)
        line.beginObject()
        line.member("run", run)
        line.member("i", index)
        try? line.member("time", record.time)
        line.member("category", record.category.rawValue)
        line.member("appId", record.appId)
        line.member("action", record.action)
        line.member("outcome", record.outcome)
        line.member("reason", record.reason)
        line.member("rules", record.rules)
        line.member("testMode", record.testMode)
        line.endObject()
        bytes += line.bytes
        bytes.append(UInt8(ascii: "\n"))
    }

    /// One journal line.
    struct Line: Decodable {
        var run: String
        var i: Int
        var time: Double
        var category: String
        var appId: String?
        var action: String?
        var outcome: String
        var reason: String
        var rules: [String]?
        var testMode: Bool?

        var entry: AuditEntry {
            AuditEntry(
                time: time, category: AuditCategory(rawValue: category), appId: appId, action: action,
                outcome: outcome, reason: reason, rules: rules ?? [], testMode: testMode)
        }
    }

    /// Stores the records of the journal at `path` that `database` does not have (a killed agent's
    /// last routine reads), synced, then empties the file and forgets the runs' positions.
    /// Returns how many were stored; a line that does not parse (torn by a crash mid-write, or
    /// the rest of a stored line written over) is skipped, and so is a stored one.
    @discardableResult
    static func recover(path: String, database: CordonDatabase) throws -> Int {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return 0 }
        let committed = try database.auditJournalCommitted()
        var missing: [String: [Line]] = [:]
        let decoder = JSONDecoder()
        // A NUL ends a line too: the rest of a half is zeros, and a torn line may meet the next half.
        for line in data.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == 0 }) {
            // A stored line (most of them, in a journal whose room was reused) is skipped unread.
            if let (run, index) = position(of: line), index <= committed[run, default: 0] { continue }
            guard let parsed = try? decoder.decode(Line.self, from: Data(line)) else { continue }
            if parsed.i > committed[parsed.run, default: 0] { missing[parsed.run, default: []].append(parsed) }
        }
        var stored = 0
        for (run, lines) in missing {
            // The halves are filled in turn: the file's order is not the run's.
            let lines = lines.sorted { $0.i < $1.i }
            let upTo = lines.last?.i ?? 0
            _ = try database.appendAudit(lines.map(\.entry), onDisk: true, journal: (run, upTo))
            stored += lines.count
        }
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
        try database.forgetAuditJournal(runs: Array(Set(committed.keys).union(missing.keys)))
        return stored
    }

    /// The run and index a line starts with, as ``write(_:run:index:to:)`` lays them out
    /// (`{"run":"…","i":N,`), without decoding the rest; nil for anything else.
    static func position(of line: Data) -> (run: String, index: Int)? {
        let prefix = Array(#"{"run":""#.utf8)
        guard line.starts(with: prefix) else { return nil }
        let afterPrefix = line.index(line.startIndex, offsetBy: prefix.count)
        guard let quote = line[afterPrefix...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let indexKey = Array(#"","i":"#.utf8)
        guard line[quote...].starts(with: indexKey) else { return nil }
        var index = 0
        var cursor = line.index(quote, offsetBy: indexKey.count)
        while cursor < line.endIndex, let digit = Self.digit(line[cursor]) {
            guard index < Int.max / 10 - 9 else { return nil }
            index = index * 10 + digit
            cursor += 1
        }
        guard cursor < line.endIndex, line[cursor] == UInt8(ascii: ","), cursor > quote + indexKey.count else {
            return nil
        }
        return (String(decoding: line[afterPrefix..<quote], as: UTF8.self), index)
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }
}
