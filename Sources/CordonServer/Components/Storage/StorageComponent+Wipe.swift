import CordonAppStorage
import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonStore
import Foundation
import NIOCore

/// Selective wipe (docs/ARCHITECTURE.md, "Storage"): one app's data crypto-erased, every other
/// app's untouched.
extension StorageComponent {
    /// Destroys `appId`'s key (its wrapped key deleted durably, first, and the WAL truncated: no
    /// copy of it stays, and its next key is a new random one), deletes its storage file and
    /// log, tells the app with `Wiped` (its app id set) and audits it.
    @discardableResult
    func wipe(_ appId: String, reason: String) -> EventLoopFuture<Void> {
        close { $0 == appId }
        host.destroyingAppKey(appId)
        let database = host.database
        let directory = dataDirectory
        let now = host.clock()
        let work = host.storePool.runIfActive(eventLoop: host.loop) { () throws -> Int in
            let generation = try database.destroyAppKey(appId: appId, now: now)
            try AppStorage.erase(dataDirectory: directory, appId: appId)
            return generation
        }
        return work.assumeIsolated().map { [self] generation in
            host.appKeyDestroyed(appId, failed: false)
            audit(appId, "storage.wipe", outcome: "wiped", reason: "\(reason); the app key is destroyed")
            host.logger.warning(
                "app data wiped (selective wipe): the app key is destroyed",
                metadata: ["appId": "\(appId)", "legacyGeneration": "\(generation)"])
            tellWiped(appId)
        }.flatMapErrorThrowing { [self] error in
            host.appKeyDestroyed(appId, failed: true)
            audit(appId, "storage.wipe", outcome: "failed", reason: "\(reason): \(error)")
            host.logger.error("selective wipe failed", metadata: ["appId": "\(appId)", "error": "\(error)"])
            throw CordonError.storageFailed(appId: appId, reason: "the wipe failed: \(error)")
        }.nonisolated()
    }

    /// Sends `Wiped` with the app id to every subscriber of `appId` (not to other apps).
    private func tellWiped(_ appId: String) {
        let event = CordonEvent(
            seq: host.lastSeq, payload: .wiped(appId: appId), reason: .policy, time: host.clock(),
            state: host.lifecycleState)
        for registration in host.registry.registrations.values where registration.appId == appId {
            guard let id = registration.subscriber, let subscriber = host.subscriber(id) else { continue }
            let frame = ReplyEncoder(allocator: subscriber.connection.channel.allocator).reply(
                SubscribeReply(event: event), continues: true)
            host.deliver(frame, to: subscriber)
        }
    }

    /// `storage.wipeOnAckTimeout`: an app the agent had to enforce on (it did not acknowledge a
    /// revocation in time) loses its data.
    func wipeOnEnforcement(_ appId: String, _ action: EnforcementAction) {
        guard action != .thaw,
            host.policy.policy.forApp(appId)[PolicyKeys.Storage.wipeOnAckTimeout].value
        else { return }
        wipe(appId, reason: "storage.wipeOnAckTimeout: the app missed its acknowledgement deadline")
    }

    /// A full wipe: every app's storage goes with the master key.
    func eraseEverything() {
        let directory = dataDirectory
        host.storePool.runIfActive(eventLoop: host.loop) {
            try AppStorage.eraseAll(dataDirectory: directory)
        }.whenComplete { [logger = host.logger] result in
            if case .failure(let error) = result { logger.error("could not delete the storage directory: \(error)") }
        }
    }
}
