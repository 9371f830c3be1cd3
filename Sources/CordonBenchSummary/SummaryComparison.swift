/// How a measured value is held to its target: at most, at least, below or above it.
public enum SummaryComparison: String, Codable, Sendable, CaseIterable {
    case atMost = "<="
    case atLeast = ">="
    case below = "<"
    case above = ">"

    /// Whether `value` meets `bound` by this comparison.
    public func holds(_ value: Double, _ bound: Double) -> Bool {
        switch self {
        case .atMost: value <= bound
        case .atLeast: value >= bound
        case .below: value < bound
        case .above: value > bound
        }
    }

    /// The comparison as printed: ≤, ≥, < or >.
    public var symbol: String {
        switch self {
        case .atMost: "≤"
        case .atLeast: "≥"
        case .below: "<"
        case .above: ">"
        }
    }
}
