/// The figures a target is judged on, from the values of its runs.
public enum SummaryStatistics {
    /// The median: the middle value, or the mean of the two middle values of an even count; nil
    /// when there are none.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The lowest and the highest value; nil when there are none.
    public static func spread(_ values: [Double]) -> (low: Double, high: Double)? {
        guard let low = values.min(), let high = values.max() else { return nil }
        return (low, high)
    }
}
