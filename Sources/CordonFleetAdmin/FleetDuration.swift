/// Durations as the admin types them: `90s`, `30m`, `12h`, `7d`, `1y` (365 days).
public enum FleetDuration {
    /// The seconds `text` names, or nil.
    public static func parse(_ text: String) -> Double? {
        guard let unit = text.last, let number = Int(text.dropLast()), number > 0 else { return nil }
        let seconds: Int? =
            switch unit {
            case "s": 1
            case "m": 60
            case "h": 3_600
            case "d": 86_400
            case "y": 365 * 86_400
            default: nil
            }
        guard let seconds, number <= Int.max / seconds / 1000 else { return nil }
        return Double(number * seconds)
    }

    /// `7d`, `12h`, `90s`: the largest unit that divides `seconds`.
    public static func format(_ seconds: Double) -> String {
        let whole = Int(seconds)
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] where whole % size == 0 && whole >= size {
            return "\(whole / size)\(unit)"
        }
        return "\(whole)s"
    }
}
