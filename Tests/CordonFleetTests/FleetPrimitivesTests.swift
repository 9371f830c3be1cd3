import CordonProtocol
import Crypto
import Foundation
import Testing

@testable import CordonFleet

/// The pieces under the verifier: times, canonical JSON (as securesystemslib writes it), delegation
/// paths, the poll schedule and the device's signed report.
@Suite struct FleetPrimitivesTests {
    @Test func timesReadAndWriteAsTUFDoes() {
        let date = TUFDate.parse("2030-01-01T00:00:00Z")
        #expect(date == Date(timeIntervalSince1970: 1_893_456_000))
        #expect(TUFDate.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(TUFDate.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        for bad in ["2030-01-01 00:00:00Z", "2030-13-01T00:00:00Z", "2030-01-01T00:00:00", "2030-01-01T00:00:00.5Z"] {
            #expect(TUFDate.parse(bad) == nil, "\(bad)")
        }
    }

    /// The canonical form of a document with every kind of value equals securesystemslib's
    /// `encode_canonical` (the function python-tuf signs with).
    @Test func canonicalJSONMatchesSecuresystemslib() throws {
        // Keys beyond ASCII, in and beyond the Basic Multilingual Plane: sorted by code point.
        let document =
            #"{"z": [1, -2, true, null], "a": {"é": "quote \" back \\ slash / tab \t é", "B": 0}, "_": "", "#
            + #""😀": 1, "ｱ": 2, "~": 3}"#
        let ours = try CanonicalJSON.encode(CanonicalJSON.parse(Array(document.utf8), role: "t"), role: "t")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import sys, json; from securesystemslib.formats import encode_canonical; "
                + "sys.stdout.buffer.write(encode_canonical(json.loads(sys.stdin.read())).encode())",
        ]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(document.utf8))
        try input.fileHandleForWriting.close()
        let theirs = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: theirs, as: UTF8.self))
        #expect(throws: TUFError.self) { try CanonicalJSON.encode(.double(1.5), role: "t") }
    }

    /// Metadata is read strictly: what two JSON readers could read differently is refused.
    @Test func theJSONReaderRefusesWhatReadersDisagreeOn() throws {
        func parse(_ text: String) throws(TUFError) -> JSONValue {
            try CanonicalJSON.parse(Array(text.utf8), role: "t")
        }
        #expect(
            try parse(#" {"a": [1, -0, 2.5e1, "\u00e9\ud83d\ude00\n", true, null]} "#)
                == .object(["a": .array([.int(1), .int(0), .double(25), .string("é😀\n"), .bool(true), .null])]))
        for bad in [
            #"{"a": 1, "a": 2}"#, #"{"a": 1} x"#, #"[1,]"#, #"{"a" 1}"#, #""\ud800""#, #""\udc00x""#, "\"\u{01}\"",
            #"01"#, #"1."#, #"-"#, #"tru"#, #""\x""#,
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ] {
            #expect(throws: TUFError.self, "\(bad)") { try parse(bad) }
        }
        // Canonical JSON bounds nesting lower still: what it signs is shallow.
        let deep = try parse(String(repeating: "[", count: 40) + String(repeating: "]", count: 40))
        #expect(throws: TUFError.self) { try CanonicalJSON.encode(deep, role: "t") }
        var invalidUTF8 = Array(#""é""#.utf8)
        invalidUTF8[1] = 0xff
        #expect(throws: TUFError.self) { try CanonicalJSON.parse(invalidUTF8, role: "t") }
    }

    @Test func delegatedPathsMatchComponentByComponent() {
        #expect(TUFDelegatedRole.matches(pattern: "commands/*", "commands/abc.json"))
        #expect(!TUFDelegatedRole.matches(pattern: "commands/*", "commands/x/abc.json"))
        #expect(!TUFDelegatedRole.matches(pattern: "commands/*", "policies/abc.json"))
        #expect(TUFDelegatedRole.matches(pattern: "policies/??-*.json", "policies/10-base.json"))
        #expect(!TUFDelegatedRole.matches(pattern: "policies/??-*.json", "policies/1-base.json"))
    }

    @Test func theScheduleJittersAndBacksOffWithFullJitter() {
        var schedule = FleetPollSchedule(interval: 60)
        #expect(schedule.afterSuccess(unit: 0) == 30 && schedule.afterSuccess(unit: 0.999) > 89)
        let ceilings = (1...10).map { _ in schedule.afterFailure(unit: 1) }
        #expect(ceilings == [2, 4, 8, 16, 32, 64, 128, 240, 240, 240], "doubling up to 4 intervals")
        #expect(schedule.afterFailure(unit: 0) == 0, "full jitter: anywhere from zero")
        #expect(schedule.failures == 11)
        _ = schedule.afterSuccess(unit: 0.5)
        #expect(schedule.failures == 0 && schedule.afterFailure(unit: 1) == 2)
    }

    @Test func aReportVerifiesOnlyAsSignedByItsDevice() throws {
        let key = TUFSigningKey()
        let publicKey = try #require(key.publicKey.ed25519)
        let device = TUFHex.encode(SHA256.hash(data: publicKey))
        let report = FleetReport(
            device: device, publicKey: publicKey, time: Date(timeIntervalSince1970: 1_800_000_000),
            versions: ["root": 1, "targets": 4], policies: ["20-fleet.json": "ab"], lastCommand: 3, lastError: nil,
            posture: [
                PostureResult(.kernelTaint, .pass, "/proc/sys/kernel/tainted: 0"),
                PostureResult(.screenLock, .unknown, "no session"),
            ])
        let file = report.file(signature: try key.sign(report.message))
        #expect(try FleetReport.verify(file, device: device) == report)
        #expect(throws: TUFError.self) { try FleetReport.verify(file, device: String(repeating: "0", count: 64)) }
        var forged = String(decoding: file, as: UTF8.self)
        forged = forged.replacingOccurrences(of: "\"lastCommand\":3", with: "\"lastCommand\":2")
        #expect(throws: TUFError.self) { try FleetReport.verify(Array(forged.utf8)) }
        let passing = String(decoding: file, as: UTF8.self).replacingOccurrences(of: "\"unknown\"", with: "\"pass\"")
        #expect(throws: TUFError.self, "a posture check changed to pass") {
            try FleetReport.verify(Array(passing.utf8))
        }
        // Another key cannot sign for this device.
        let other = TUFSigningKey()
        #expect(throws: TUFError.self) {
            try FleetReport.verify(report.file(signature: try other.sign(report.message)))
        }
    }

    /// A field's JSON pointer escapes `~` and `/` as RFC 6901 says, and leaves other keys as they are.
    @Test func aFieldsPointerEscapesTildeAndSlash() throws {
        let fields = try TUFFields(.object([:]), at: "/signed", role: "targets")
        #expect(fields.path("expires") == "/signed/expires")
        #expect(fields.path("a/b~c") == "/signed/a~1b~0c")
        #expect(fields.path("~1") == "/signed/~01")
    }
}
