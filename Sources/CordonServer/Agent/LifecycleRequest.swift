import CordonLifecycle
import CordonProtocol
import CordonSecrets
import NIOCore

/// Who answers a lifecycle request: a call's promise and encoder, with what its check needs
/// (the passcode, a new one, a recovery key, a fingerprint reader). The machine answers it with
/// `.succeed` / `.fail`, or `KeyVault` once its check ends.
struct LifecycleRequest {
    let promise: EventLoopPromise<ByteBuffer>
    let encoder: ReplyEncoder
    var passcode: String?
    var newPasscode: String?
    var recoveryKey: RecoveryKey?
    /// A fingerprint unlock: fprintd's reader to scan on instead of checking a passcode.
    var fingerprintDevice: String? = nil
}
