extension SummaryRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case benchmark, subject, target, comparison, targetValue, everyRunLimit, unit, baseline, values, note
        case median, spreadLow, spreadHigh, runs, runsMet, status
    }

    /// Reads the measured fields; the derived ones (median, spread, runs met, status) are
    /// computed again from them, whatever the line says.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let values = try container.decode([Double].self, forKey: .values)
        guard values.allSatisfy(\.isFinite) else {
            throw DecodingError.dataCorruptedError(forKey: .values, in: container, debugDescription: "not finite")
        }
        self.init(
            benchmark: try container.decode(String.self, forKey: .benchmark),
            subject: try container.decode(String.self, forKey: .subject),
            comparison: try container.decode(SummaryComparison.self, forKey: .comparison),
            targetValue: try container.decode(Double.self, forKey: .targetValue),
            everyRunLimit: try container.decodeIfPresent(Double.self, forKey: .everyRunLimit),
            unit: try container.decode(String.self, forKey: .unit),
            baseline: try container.decodeIfPresent(String.self, forKey: .baseline), values: values,
            note: try container.decodeIfPresent(String.self, forKey: .note))
    }

    /// Writes every field, the derived ones too, so the line reads on its own (`jq`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(benchmark, forKey: .benchmark)
        try container.encode(subject, forKey: .subject)
        try container.encode(target, forKey: .target)
        try container.encode(comparison, forKey: .comparison)
        try container.encode(targetValue, forKey: .targetValue)
        try container.encodeIfPresent(everyRunLimit, forKey: .everyRunLimit)
        try container.encode(unit, forKey: .unit)
        try container.encodeIfPresent(baseline, forKey: .baseline)
        try container.encode(values, forKey: .values)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encodeIfPresent(median, forKey: .median)
        try container.encodeIfPresent(spread?.low, forKey: .spreadLow)
        try container.encodeIfPresent(spread?.high, forKey: .spreadHigh)
        try container.encode(values.count, forKey: .runs)
        try container.encode(runsMet, forKey: .runsMet)
        try container.encode(status, forKey: .status)
    }
}
