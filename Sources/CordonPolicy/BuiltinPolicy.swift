/// The embedded safe default policy, compiled in so the agent always has a complete policy even
/// when no file can be read; `policies/default.json` is its text.
///
/// It sets every key of every section (allow-lists excepted: absent means "no allow-list"), each to
/// the loosest sensible value or to the agent's long-standing behaviour, so that admin and user
/// files only ever tighten it and the merged effective policy always has a value for every key.
/// The values are the `builtin` of each declaration in ``PolicyKeys``; a test checks that `json`
/// equals `policies/default.json` byte for byte and parses without diagnostics.
public enum BuiltinPolicy {
    /// Where the embedded default comes from.
    public static let source = PolicySource(path: "<builtin>", origin: .builtin)

    /// The default as a document: every setting ``PolicyKeys`` declares at its built-in value.
    public static let document = PolicyDocument(settings: PolicySchema.defaultSettings, overrides: [])

    /// The text of `policies/default.json`, generated from the declarations.
    public static var json: String { PolicySchema.defaultPolicy }
}
