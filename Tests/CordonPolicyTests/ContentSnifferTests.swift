import Foundation
import Testing

@testable import CordonPolicy

/// `ContentSniffer`: a type told where its readers look for it, so that a PDF behind a
/// byte-order mark, a blank line or some text, or a ZIP behind anything, is still what it is
/// (docs/THREAT-MODEL.md, "Documents").
@Suite struct ContentSnifferTests {
    static let pdf = Array("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".utf8)
    static let trailer = Array("xref\n0 1\ntrailer\n<< /Root 1 0 R >>\nstartxref\n9\n%%EOF\n".utf8)

    static func types(_ content: [UInt8]) -> [String] {
        ContentSniffer.contentTypes(
            head: Array(content.prefix(1024)), tail: Array(content.suffix(65_557)))
    }

    @Test func aPDFHeaderAnywhereInTheFirstKiBIsAPDF() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(Self.types(bom + Self.pdf) == ["application/pdf"])
        #expect(Self.types(Array("\n".utf8) + Self.pdf) == ["application/pdf"])
        #expect(Self.types(Array(repeating: UInt8(ascii: "a"), count: 100) + Self.pdf) == ["application/pdf"])
        #expect(Self.types(Array(repeating: UInt8(ascii: " "), count: 1019) + Self.pdf) == ["application/pdf"])
        // Past the first KiB, no reader takes it for a header; without a trailer, it is text.
        #expect(Self.types(Array(repeating: UInt8(ascii: " "), count: 1020) + Self.pdf) == ["text/plain"])
        // A trailer alone is enough for pypdf and poppler.
        #expect(Self.types(Array(repeating: UInt8(ascii: "a"), count: 5000) + Self.trailer) == ["application/pdf"])
        #expect(ContentSniffer.contentType(of: bom + Self.pdf) == "application/pdf")
    }

    @Test func polyglotsAreEveryTypeTheyOpenAs() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        #expect(Self.types(png + Array(repeating: 0, count: 40) + Self.pdf) == ["image/png", "application/pdf"])
        // A ZIP whose end-of-central-directory record ends the file, behind text.
        var end: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + Array(repeating: 0, count: 18)
        #expect(Self.types(Array("just some notes\n".utf8) + end) == ["application/zip"])
        // With a comment, as long as the record says.
        end[20] = 3
        #expect(Self.types(Array("notes\n".utf8) + end + Array("abc".utf8)) == ["application/zip"])
        #expect(
            Self.types([0x7F, 0x45, 0x4C, 0x46, 2, 1] + end + Array("abc".utf8)) == [
                "application/x-executable", "application/zip",
            ])
        // A record claiming a comment longer than what follows is not one.
        end[20] = 200
        #expect(Self.types(Array("notes\n".utf8) + end) == ["application/octet-stream"])
    }

    @Test func plainTextStaysText() {
        #expect(Self.types(Array("quarterly numbers\n".utf8)) == ["text/plain"])
        #expect(Self.types(Array("le résumé — très bien\n".utf8)) == ["text/plain"])
        // Text long enough that its tail starts inside a character is still text.
        let long = Array(String(repeating: "é", count: 40_000).utf8)
        #expect(Self.types(long) == ["text/plain"])
        #expect(Self.types([0, 1, 2, 3]) == ["application/octet-stream"])
        #expect(Self.types([]) == ["text/plain"])
    }

    @Test func aClaimIsJudgedOnTheMainType() {
        #expect(ContentSniffer.contradicts(claimed: "text/plain", detected: Self.types(Array("\n".utf8) + Self.pdf)[0]))
        #expect(!ContentSniffer.contradicts(claimed: "application/pdf", detected: "application/pdf"))
    }
}
