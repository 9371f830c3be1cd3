import CordonAppStorage
import CordonProtocol
import NIOCore

/// `io.cordon.Storage.Get` of an app's own record: answered on the loop when the app's
/// `RecordCache` holds it and the file has not changed (no thread hop, no disk); otherwise read on
/// the store pool, opened on the loop and kept for the next time (docs/PERFORMANCE.md, "Data calls
/// on the loop"). An administrator's `Get` (with the passcode) is audited and always goes to the
/// pool.
extension StorageComponent {
    func get(_ name: String, namespace: String, appId: String, encoder: ReplyEncoder) -> CallOutcome {
        let storage: AppStorage
        do {
            storage = try self.storage(for: appId)
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        guard let cache = recordCache(appId, storage) else {
            return .reply(encoder.error(CordonError.containerLocked(appId: appId, state: "closed").varlinkError))
        }
        do {
            if let value = try cache.value(namespace: namespace, name: name, { Base64.string($0) }) {
                return .reply(encoder.reply(StorageGetReply(value: value)))
            }
        } catch {
            return .reply(encoder.error(error.varlinkError))
        }
        // A miss: the sealed bytes from the pool (and the cache's probe, the first time).
        let before = cache.version()
        let path = storage.path
        let needsProbe = !cache.hasProbe
        let read = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> SealedRead in
            let sealed = try storage.sealedValue(namespace: namespace, name: name)
            return SealedRead(sealed: sealed, probe: needsProbe ? RecordCache.Probe.open(path: path) : nil)
        }
        return .deferred(
            read.assumeIsolated().flatMapThrowing { [self] (result: SealedRead) -> ByteBuffer in
                let sealed = result.sealed
                if let probe = result.probe {
                    if caches[appId] === cache { cache.attach(probe) } else { closeLater(probe) }
                }
                guard let sealed else { throw CordonError.recordNotFound(namespace: namespace, name: name) }
                let value = try cache.open(sealed, namespace: namespace, name: name) { Base64.string($0) }
                if caches[appId] === cache {
                    cache.keep(sealed, namespace: namespace, name: name, versionBefore: before)
                }
                return encoder.reply(StorageGetReply(value: value))
            }.recover { error in
                let typed = error as? CordonError ?? .internalError(reason: "storage: \(error)")
                return encoder.error(typed.varlinkError)
            }.nonisolated())
    }

    /// What a miss reads on the pool: the sealed value, and the cache's probe the first time.
    struct SealedRead: Sendable {
        var sealed: [UInt8]?
        var probe: RecordCache.Probe?
    }

    /// The record cache of `appId`'s open `storage`, made the first time.
    private func recordCache(_ appId: String, _ storage: AppStorage) -> RecordCache? {
        if let cache = caches[appId] { return cache }
        let cache = storage.makeRecordCache()
        caches[appId] = cache
        return cache
    }

    /// Closes a probe no cache took, on the pool.
    private func closeLater(_ probe: RecordCache.Probe) {
        host.storePool.runIfActive(eventLoop: host.loop) { probe.close() }.whenFailure { _ in probe.close() }
    }
}
