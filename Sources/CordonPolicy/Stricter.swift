/// The "most restrictive wins" orders: each is a strict total order (`isStricter(a, b)`), so the
/// join of settings is commutative, associative and idempotent.
enum Stricter {
    /// The higher `strictness` wins.
    @Sendable static func level<Value: Restrictiveness>(_ lhs: Value, _ rhs: Value) -> Bool {
        lhs.strictness > rhs.strictness
    }

    /// `true` is stricter.
    @Sendable static func whenTrue(_ lhs: Bool, _ rhs: Bool) -> Bool { lhs && !rhs }

    /// `false` is stricter.
    @Sendable static func whenFalse(_ lhs: Bool, _ rhs: Bool) -> Bool { !lhs && rhs }

    /// The larger number wins.
    @Sendable static func larger(_ lhs: Int, _ rhs: Int) -> Bool { lhs > rhs }

    /// The smaller bound wins; nil is no bound, the loosest.
    @Sendable static func smallerBound(_ lhs: Int?, _ rhs: Int?) -> Bool {
        switch (lhs, rhs) {
        case (.some(let lhs), .some(let rhs)): return lhs < rhs
        case (.some, .none): return true
        case (.none, _): return false
        }
    }

    /// The smallest positive timeout wins; 0 (never) and below are the loosest.
    @Sendable static func shorterTimeout(_ lhs: Int, _ rhs: Int) -> Bool {
        let lhsKey = lhs > 0 ? (0, lhs) : (1, lhs)
        let rhsKey = rhs > 0 ? (0, rhs) : (1, rhs)
        return lhsKey < rhsKey
    }

    /// Allow-lists intersect; nil restricts nothing.
    @Sendable static func intersect(_ lhs: Set<String>?, _ rhs: Set<String>?) -> Set<String>? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return lhs.intersection(rhs)
    }

    /// Glob allow-lists: both must be satisfied; nil restricts nothing.
    @Sendable static func intersect(_ lhs: SaveLocationClauses?, _ rhs: SaveLocationClauses?) -> SaveLocationClauses? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return lhs.intersecting(rhs)
    }
}
