import CordonBenchSummary
import Testing

@Suite("Summary record")
struct SummaryRecordTests {
    func ratio(_ values: [Double], target: Double = 1.5, everyRun: Double? = nil) -> SummaryRecord {
        SummaryRecord(
            benchmark: "rtt", subject: "GetStatus round trip, one-cpu", comparison: .atMost, targetValue: target,
            everyRunLimit: everyRun, unit: "×", baseline: "C echo", values: values)
    }

    @Test func medianOfAnOddCountIsTheMiddleValue() {
        #expect(SummaryStatistics.median([3, 1, 2, 5, 4]) == 3)
        #expect(SummaryStatistics.median([7]) == 7)
    }

    @Test func medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        #expect(SummaryStatistics.median([4, 1, 3, 2]) == 2.5)
        #expect(SummaryStatistics.median([]) == nil)
    }

    @Test func spreadIsTheLowestAndHighestRun() throws {
        let spread = try #require(SummaryStatistics.spread([1.3, 1.1, 1.6, 1.2]))
        #expect(spread.low == 1.1)
        #expect(spread.high == 1.6)
        #expect(SummaryStatistics.spread([]) == nil)
    }

    @Test func countsTheRunsThatMeetTheTargetAlone() {
        let record = ratio([1.2, 1.5, 1.51, 1.9, 1.0])
        #expect(record.runsMet == 3)
        #expect(record.median == 1.5)
        #expect(record.status == .met)
    }

    @Test func aMedianBeyondTheTargetIsNotMet() {
        let record = ratio([1.6, 1.4, 1.7])
        #expect(record.runsMet == 1)
        #expect(record.status == .notMet)
    }

    @Test func everyRunLimitFailsATargetWhoseMedianHolds() {
        let within = ratio([0.35, 0.38, 0.41, 0.30, 0.49], target: 0.4, everyRun: 0.5)
        #expect(within.status == .met)
        #expect(within.runsMet == 3)
        let oneRunAbove = ratio([0.35, 0.38, 0.39, 0.30, 0.52], target: 0.4, everyRun: 0.5)
        #expect(oneRunAbove.median == 0.38)
        #expect(oneRunAbove.status == .notMet)
        #expect(oneRunAbove.target == "median ≤ 0.4×, every run ≤ 0.5×")
    }

    @Test func atLeastAndAboveHoldTheOtherWay() {
        let throughput = SummaryRecord(
            benchmark: "storage", subject: "decrypt", comparison: .atLeast, targetValue: 1, unit: "×",
            baseline: "age", values: [1.0, 1.1, 0.9])
        #expect(throughput.status == .met)
        #expect(throughput.runsMet == 2)
        #expect(SummaryComparison.above.holds(1.0, 1.0) == false)
        #expect(SummaryComparison.below.holds(0.99, 1.0))
    }

    @Test func noValuesIsSkipped() {
        let record = SummaryRecord.skipped(
            benchmark: "rtt", subject: "Identity.GetToken round trip, unpinned", comparison: .atMost,
            targetValue: 2, unit: "×", baseline: "C echo", reason: "python3 has no authlib")
        #expect(record.status == .skipped)
        #expect(record.median == nil)
        #expect(record.runsMet == 0)
    }
}
