import Foundation

/// How the summary prints numbers: values with as many decimals as their size calls for, targets
/// as written, each followed by its unit (`×` directly, others after a space).
public enum SummaryFormat {
    /// A measured value: two decimals below 10, one below 100, none above.
    public static func value(_ value: Double, unit: String) -> String {
        let magnitude = abs(value)
        let decimals = magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0
        return withUnit(String(format: "%.\(decimals)f", value), unit)
    }

    /// A target's bound, without trailing zeros (`1.5×`, `30 MB`).
    public static func bound(_ value: Double, unit: String) -> String {
        withUnit(String(format: "%g", value), unit)
    }

    /// The lowest and highest value: `1.10–1.32×`.
    public static func spread(_ low: Double, _ high: Double, unit: String) -> String {
        let high = value(high, unit: unit)
        let low = value(low, unit: "")
        return low + "–" + high
    }

    private static func withUnit(_ number: String, _ unit: String) -> String {
        unit.isEmpty || unit == "×" ? number + unit : number + " " + unit
    }
}
