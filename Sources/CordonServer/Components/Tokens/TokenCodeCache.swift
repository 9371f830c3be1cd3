import CordonStore

/// The sealed records of the tokens without a counter (TOTP, SecurID) that `Code` has read, held
/// on the agent's loop so that the next code of the same token is answered there, without a trip
/// to the store pool (docs/PERFORMANCE.md, "Data calls on the loop"). Only sealed records are held
/// (opened per call with the tokens key, which a lock or a revocation drops); an HOTP token is
/// never held, its counter must reach the disk before each code.
///
/// Every change of the table (import, rename, remove, reset, a wipe) and every closing of the
/// keys drops them all and moves ``epoch`` on; a read from the pool is kept only when the epoch
/// it started in is still the current one, so a read that raced a change never brings back what
/// the change removed.
struct TokenCodeCache {
    /// At most this many records are held (a table holds `tokens.maxTokens`, 10 by default).
    static let capacity = 256

    private var records: [String: StoredToken] = [:]
    /// Moves on with every change; a pool read started in an older epoch is not kept.
    private(set) var epoch = 0

    /// The held record of `serial`, if any.
    subscript(serial serial: String) -> StoredToken? { records[serial] }

    /// Keeps `stored` (read from the pool in `epoch`) if nothing changed since and it has no
    /// counter.
    mutating func keep(_ stored: StoredToken, readIn epoch: Int) {
        guard epoch == self.epoch, stored.counter == nil else { return }
        if records.count >= Self.capacity, records[stored.serial] == nil { records.removeAll() }
        records[stored.serial] = stored
    }

    /// Drops every record and moves the epoch on.
    mutating func invalidate() {
        records.removeAll()
        epoch += 1
    }
}
