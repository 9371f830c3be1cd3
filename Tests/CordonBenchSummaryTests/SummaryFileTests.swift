import CordonBenchSummary
import Foundation
import Testing

@Suite("Summary file")
struct SummaryFileTests {
    static let memory = SummaryRecord(
        benchmark: "memory", subject: "cordond idle", comparison: .atMost, targetValue: 30, unit: "MB",
        baseline: nil, values: [27.9, 28.1, 28.0, 28.4, 27.7], note: "VmRSS")

    @Test func appendedRecordsReadBackInOrder() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let skipped = SummaryRecord.skipped(
            benchmark: "rtt", subject: "Identity.GetToken", comparison: .atMost, targetValue: 2, unit: "×",
            baseline: "C echo", reason: "no python3")
        try SummaryFile.append([Self.memory], to: path)
        try SummaryFile.append([skipped], to: path)
        let records = try SummaryFile.read(path)
        #expect(records == [Self.memory, skipped])
        #expect(records[0].median == 28.0)
        #expect(records[1].status == .skipped)
    }

    @Test func eachLineCarriesTheDerivedFigures() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try SummaryFile.append([Self.memory], to: path)
        let line = try String(contentsOfFile: path, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["median"] as? Double == 28.0)
        #expect(object["spreadLow"] as? Double == 27.7)
        #expect(object["spreadHigh"] as? Double == 28.4)
        #expect(object["runsMet"] as? Int == 5)
        #expect(object["runs"] as? Int == 5)
        #expect(object["status"] as? String == "met")
        #expect(object["target"] as? String == "median ≤ 30 MB")
        #expect(object["comparison"] as? String == "<=")
    }

    @Test func derivedFiguresAreComputedAgainOnReading() throws {
        let line =
            #"{"benchmark":"startup","subject":"first reply","comparison":"<=","targetValue":20,"unit":"ms","#
            + #""values":[25,26,24],"median":1,"status":"met"}"#
        let records = try SummaryFile.parse(line, path: "s.jsonl")
        #expect(records.first?.median == 25)
        #expect(records.first?.status == .notMet)
    }

    @Test func aMalformedLineIsNamedByNumber() throws {
        let good = String(decoding: try JSONEncoder().encode(Self.memory), as: UTF8.self)
        #expect(throws: SummaryFileError.malformedLine(path: "s.jsonl", line: 3, reason: "not JSON")) {
            try SummaryFile.parse(good + "\n\n{\"benchmark\": \n" + good, path: "s.jsonl")
        }
        #expect(throws: SummaryFileError.malformedLine(path: "s.jsonl", line: 2, reason: "no values")) {
            try SummaryFile.parse(good + "\n{\"benchmark\":\"rtt\",\"subject\":\"x\"}", path: "s.jsonl")
        }
    }

    @Test func anUnknownComparisonIsMalformed() throws {
        let line =
            #"{"benchmark":"rtt","subject":"x","comparison":"~","targetValue":1,"unit":"×","values":[1]}"#
        do {
            _ = try SummaryFile.parse(line, path: "s.jsonl")
            Issue.record("an unknown comparison was read")
        } catch let error as SummaryFileError {
            guard case .malformedLine(_, let number, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(number == 1)
            #expect(reason.hasPrefix("comparison"))
            #expect(error.description.hasPrefix("s.jsonl:1: not a summary record: comparison"))
        }
    }

    @Test func aMissingOrEmptyFileIsAnError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(UUID()).jsonl").path
        #expect {
            try SummaryFile.read(path)
        } throws: { error in
            guard case .unreadable(let named, _) = error as? SummaryFileError else { return false }
            return named == path
        }
        try "\n\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: SummaryFileError.empty(path: path)) { try SummaryFile.read(path) }
    }
}
