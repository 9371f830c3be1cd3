/// The embedded safe default policy: `policies/default.json`, compiled in so the agent always has
/// a complete policy even when no file can be read.
///
/// It sets every key of every section (allow-lists excepted: absent means "no allow-list"), each to
/// the loosest sensible value or to the agent's long-standing behaviour, so that admin and user
/// files only ever tighten it and the merged effective policy always has a value for every key.
/// A test checks that `json` equals `policies/default.json` byte for byte.
public enum BuiltinPolicy {
    /// Where the embedded default comes from.
    public static let source = PolicySource(path: "<builtin>", origin: .builtin)

    /// The parsed default (it is valid: a test parses `json` without diagnostics).
    public static let document: PolicyDocument = {
        switch PolicyParser.parse(json, source: source) {
        case .success(let document):
            return document
        case .failure(let failure):
            preconditionFailure("the embedded default policy is invalid:\n\(failure)")
        }
    }()

    /// The text of `policies/default.json`.
    public static let json = #"""
        {
          "schema": "cordon.policy.v1",
          "apps": {
            "managed": [],
            "unknown": "unmanaged"
          },
          "passcode": {
            "minLength": 4,
            "kind": "numeric",
            "allowSimple": true,
            "maxAttempts": 10,
            "onMaxAttempts": "wipe"
          },
          "lock": {
            "idleTimeoutSeconds": 300,
            "onScreenLock": true,
            "onSuspend": true,
            "reauthGraceSeconds": 60,
            "discardKeyOnLock": false,
            "ackDeadlineMs": 2000,
            "onAckTimeout": "report"
          },
          "pasteboard": {
            "copyOut": "any",
            "maxChars": 10000000,
            "clearOnLock": false
          },
          "documents": {
            "sendTo": "any",
            "receiveFrom": "any",
            "saveCopies": "allow",
            "blockedTypes": []
          },
          "storage": {
            "dataAccess": "afterFirstUnlock"
          },
          "conditions": {
            "debuggerAttached": "warn",
            "preloadInjected": "warn",
            "executableMismatch": "warn"
          },
          "overrides": []
        }

        """#
}
