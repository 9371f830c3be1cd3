import CordonStore

/// The sealed identity sessions `GetToken` read, kept on the event loop so that a valid token is
/// answered without a thread hop or a database read (docs/PERFORMANCE.md, "Data calls on the
/// loop"); each call still opens its session under the current sealer, so nothing is kept open.
///
/// Only the agent writes identity sessions, each write through ``IdentityComponent``, which calls
/// ``writing()`` as a write starts and again as it ends. A read from the store is kept only when
/// no write started or ended while it ran (its ``epoch`` is unchanged), so the cache never holds
/// a session older than the store's.
struct IdentitySessionCache {
    private struct Key: Hashable {
        let provider: String
        let domain: String
    }

    private var sessions: [Key: StoredIdentitySession] = [:]
    /// Moves on at every write's start and end: a read started at another epoch is not kept.
    private(set) var epoch = 0

    /// The kept session of `provider` for `domain`, if any.
    func session(provider: String, domain: String) -> StoredIdentitySession? {
        sessions[Key(provider: provider, domain: domain)]
    }

    /// Keeps `stored`, read from the store at `epoch`, unless a write started or ended since.
    mutating func keep(_ stored: StoredIdentitySession?, provider: String, domain: String, readAt epoch: Int) {
        guard epoch == self.epoch, let stored else { return }
        sessions[Key(provider: provider, domain: domain)] = stored
    }

    /// A write of sessions starts or ends (a sign-in, a refresh, a sign-out, a wipe), or the
    /// container locks: everything kept is dropped.
    mutating func writing() {
        sessions = [:]
        epoch &+= 1
    }
}
