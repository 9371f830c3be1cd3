import CordonAge
import CordonProtocol
import Crypto
import NIOCore

extension StorageComponent {
    /// `ExportIdentity` once the passcode is checked: the app's age identity, derived from its key
    /// of the current generation the way the SDK's `SecureFile` derives it; audited.
    func exportIdentity(_ appId: String, encoder: ReplyEncoder) -> CallOutcome {
        let state = host.lifecycleState
        guard state.keyAvailable, let key = host.appKey(for: appId) else {
            audit(appId, "storage.export-identity", outcome: "refused", reason: "no key (\(state.rawValue))")
            return .reply(encoder.error(CordonError.containerLocked(appId: appId, state: state.rawValue).varlinkError))
        }
        defer { key.zero() }
        let identity = key.withUnsafeBytes { AgeX25519Identity.derived(fromAppKey: SymmetricKey(data: $0)) }
        audit(appId, "storage.export-identity", outcome: "allow", reason: "an administrator's call")
        return .reply(
            encoder.reply(
                StorageExportIdentityReply(identity: identity.encoded, recipient: identity.recipient.encoded)))
    }
}
