import CordonPinentry
import Testing

@Suite("Assuan")
struct AssuanTests {
    func parse(_ line: String) throws -> Assuan.Response { try Assuan.parse(Array(line.utf8)) }

    func decode(_ line: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try Assuan.decodeData(line: Array(line.utf8)) { bytes.append($0) }
        return bytes
    }

    @Test func escapesPercentCarriageReturnAndLineFeed() {
        #expect(Assuan.escape("50% off\r\nnow") == "50%25 off%0D%0Anow")
        #expect(Assuan.escape("plain text: é") == "plain text: é")
        #expect(Assuan.escape("%25") == "%2525")
    }

    @Test func buildsCommandLines() {
        #expect(Assuan.command("GETPIN") == "GETPIN\n")
        #expect(Assuan.command("SETDESC", "line one\nline two") == "SETDESC line one%0Aline two\n")
        #expect(
            Assuan.command("SETERROR", "Wrong passcode, 9 attempts left.")
                == "SETERROR Wrong passcode, 9 attempts left.\n")
    }

    @Test func parsesEveryResponseKind() throws {
        #expect(try parse("OK") == .ok(""))
        #expect(try parse("OK Pleased to meet you") == .ok("Pleased to meet you"))
        #expect(try parse("OK closing connection\r") == .ok("closing connection"))
        #expect(
            try parse("ERR 83886179 Operation cancelled <Pinentry>")
                == .error(code: 83_886_179, message: "Operation cancelled <Pinentry>"))
        #expect(try parse("ERR 100663414") == .error(code: 100_663_414, message: ""))
        #expect(try parse("D 50%25 off") == .data)
        #expect(try parse("D") == .data)
        #expect(try parse("# a comment") == .comment)
        #expect(try parse("#") == .comment)
        #expect(try parse("S PASSWORD_FROM_CACHE") == .status(keyword: "PASSWORD_FROM_CACHE", text: ""))
        #expect(try parse("S PROGRESS a 1 2") == .status(keyword: "PROGRESS", text: "a 1 2"))
        #expect(try parse("INQUIRE QUALITY abc") == .inquire(keyword: "QUALITY", text: "abc"))
        #expect(try parse("END") == .end)
    }

    @Test func rejectsMalformedLines() {
        #expect(throws: Assuan.ProtocolError.self) { try parse("ERR cancelled") }
        #expect(throws: Assuan.ProtocolError.self) { try parse("HELLO") }
        #expect(throws: Assuan.ProtocolError.self) { try parse("") }
        #expect(throws: Assuan.ProtocolError.self) { try parse("DATA 1") }
        #expect(throws: Assuan.ProtocolError.self) { try parse("OK 100%") }
    }

    @Test func decodesDataLines() throws {
        #expect(try decode("D 50%25 off now") == Array("50% off now".utf8))
        #expect(try decode("D a%0Ab%0dc") == Array("a\nb\rc".utf8))
        #expect(try decode("D pass\r") == Array("pass".utf8))
        #expect(try decode("D ") == [])
        #expect(try decode("D %C3%A9") == Array("é".utf8))
    }

    @Test func rejectsBadEscapesInData() {
        for line in ["D 100%", "D 1%2", "D %zz", "D %0g"] {
            #expect(throws: Assuan.ProtocolError.self, "\(line)") { try decode(line) }
        }
    }

    @Test func escapingRoundTrips() throws {
        for text in ["", "50% off now", "%%%", "a\r\nb", "ünïcödé %0A literal"] {
            #expect(try decode("D " + Assuan.escape(text)) == Array(text.utf8))
        }
    }

    @Test func recognisesCancellation() {
        #expect(Assuan.isCancellation(Assuan.cancelledCode))
        #expect(Assuan.isCancellation(83_886_278))  // GPG_ERR_FULLY_CANCELED from pinentry
        #expect(Assuan.isCancellation(99))
        #expect(!Assuan.isCancellation(83_918_950))  // an ioctl failure, not a cancel
    }
}
