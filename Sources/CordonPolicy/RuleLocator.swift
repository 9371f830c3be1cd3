/// Names the rules of one document: its source and the pointer prefix of the sections being read
/// (`""` for the document's top level, `/overrides/2` for an override).
struct RuleLocator {
    var source: PolicySource
    var prefix: String

    /// The rule at `pointer` below the prefix.
    func callAsFunction(_ pointer: String) -> RuleReference {
        RuleReference(source: source, pointer: prefix + pointer)
    }
}
