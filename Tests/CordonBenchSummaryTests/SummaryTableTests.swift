import CordonBenchSummary
import Testing

@Suite("Summary table")
struct SummaryTableTests {
    static let records = [
        SummaryRecord(
            benchmark: "rtt", subject: "GetStatus round trip, one-cpu", comparison: .atMost, targetValue: 1.5,
            unit: "×", baseline: "C echo", values: [1.21, 1.18, 1.3, 1.25, 1.6]),
        SummaryRecord(
            benchmark: "fanout", subject: "1,000 subscribers", comparison: .atMost, targetValue: 0.4,
            everyRunLimit: 0.5, unit: "×", baseline: "dbus-daemon", values: [0.38, 0.41, 0.52, 0.36, 0.39]),
        SummaryRecord(
            benchmark: "startup", subject: "socket-activated first reply", comparison: .atMost, targetValue: 20,
            unit: "ms", baseline: nil, values: [14.3, 15.5, 13.0]),
        SummaryRecord.skipped(
            benchmark: "rtt", subject: "Identity.GetToken | cached", comparison: .atMost, targetValue: 2,
            unit: "×", baseline: "C echo", reason: "no authlib"),
    ]

    @Test func textTableAlignsColumnsAndEndsWithTheTally() {
        let text = SummaryTable(records: Self.records).text()
        let expected = [
            "benchmark  measured                       target                           baseline       median"
                + "        spread  runs met  status",
            "---------  -----------------------------  -------------------------------  ------------  -------"
                + "  ------------  --------  -------",
            "rtt        GetStatus round trip, one-cpu  median ≤ 1.5×                    C echo          1.25×"
                + "    1.18–1.60×    4 of 5  met",
            "fanout     1,000 subscribers              median ≤ 0.4×, every run ≤ 0.5×  dbus-daemon     0.39×"
                + "    0.36–0.52×    3 of 5  not met",
            "startup    socket-activated first reply   median ≤ 20 ms                   – (absolute)  14.3 ms"
                + "  13.0–15.5 ms    3 of 3  met",
            "rtt        Identity.GetToken | cached     median ≤ 2×                      C echo              –"
                + "             –         –  skipped",
            "",
            "rtt, Identity.GetToken | cached: skipped: no authlib",
            "4 targets: 2 met, 1 not met, 1 skipped",
            "",
        ]
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) == expected)
    }

    @Test func markdownTableEscapesPipesAndListsTheNotes() {
        let lines = SummaryTable(records: Self.records).markdown().split(separator: "\n")
        #expect(lines[0] == "| benchmark | measured | target | baseline | median | spread | runs met | status |")
        #expect(lines[1] == "| --- | --- | --- | --- | --- | --- | --- | --- |")
        #expect(
            lines[2]
                == "| rtt | GetStatus round trip, one-cpu | median ≤ 1.5× | C echo | 1.25× | 1.18–1.60× | 4 of 5 | met |"
        )
        #expect(lines[5].hasPrefix("| rtt | Identity.GetToken \\| cached | median ≤ 2× |"))
        #expect(lines[6] == "- rtt, Identity.GetToken | cached: skipped: no authlib")
        #expect(lines[7] == "4 targets: 2 met, 1 not met, 1 skipped.")
    }

    @Test func valuesTakeDecimalsByTheirSize() {
        #expect(SummaryFormat.value(1.234, unit: "×") == "1.23×")
        #expect(SummaryFormat.value(28.04, unit: "MB") == "28.0 MB")
        #expect(SummaryFormat.value(240.6, unit: "×") == "241×")
        #expect(SummaryFormat.bound(80, unit: "MB") == "80 MB")
        #expect(SummaryFormat.bound(1.5, unit: "×") == "1.5×")
    }
}
