/// Where `cordon run`'s notes for the user go (a line each; the CLI writes them to stderr, tests
/// collect them).
public typealias RunNote = @Sendable (String) -> Void
