/// The verdict of one target: met, not met, or not measured (with the reason in the record).
public enum SummaryStatus: String, Codable, Sendable {
    case met
    case notMet = "not met"
    case skipped
}
