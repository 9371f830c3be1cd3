import CordonTokens
import Foundation
import Testing

@Suite("Importing tokens into records")
struct TokenImporterTests {
    let key = [UInt8](repeating: 1, count: 32)

    @Test("every format is recognized; anything else names data")
    func kinds() throws {
        let vectors = try SecurIDTests.vectors()
        #expect(TokenImporter.kind(of: vectors.first { $0.format == "v2" }?.token ?? "") == .ctf)
        #expect(TokenImporter.kind(of: vectors.first { $0.format == "v3" }?.token ?? "") == .ctf)
        #expect(TokenImporter.kind(of: vectors.first { $0.format == "sdtid" }?.token ?? "") == .sdtid)
        #expect(TokenImporter.kind(of: " otpauth://totp/x?secret=JBSWY3DP") == .otpauth)
        #expect(TokenImporter.kind(of: "OTPAUTH-MIGRATION://offline?data=x") == .otpauthMigration)
        #expect(TokenImporter.kind(of: "hello") == nil)
        #expect(throws: TokenFormatError.self) {
            try TokenImporter.read(TokenImportRequest(data: "hello"), now: 0, oathIDKey: key)
        }
    }

    @Test("one limit: 16 KiB of data; past it refused naming its size and the limit")
    func oneLimit() throws {
        #expect(TokenImporter.maximumLength == 16_384 && MigrationPayload.maximumLength == 16_384)
        let over = "otpauth://totp/x?secret=" + String(repeating: "A", count: 16_385 - 24)
        #expect(
            throws: TokenFormatError.invalidField(
                field: "data", reason: "it is 16385 bytes; a token import is at most 16384 bytes (16 KiB)")
        ) {
            try TokenImporter.read(TokenImportRequest(data: over), now: 0, oathIDKey: key)
        }
    }

    @Test("records seal and read back, and give stoken's codes")
    func securIDRecords() throws {
        for vector in try SecurIDTests.vectors() where vector.time == 1_700_000_000 {
            let request = TokenImportRequest(
                data: vector.token, password: vector.password, deviceID: vector.devid.isEmpty ? nil : vector.devid,
                pin: vector.pin)
            let (_, records) = try TokenImporter.read(request, now: 1_700_000_000, oathIDKey: key)
            let record = try #require(records.first)
            let decoded = try TokenRecord.decode(record.encoded())
            #expect(decoded == record)
            #expect(try decoded.code(at: vector.time).code == vector.code, "\(vector.format)")
            #expect(record.kind == "securid" && record.serial.count == 12 && record.counter == nil)
        }
    }

    @Test("expired, wrong device and a PIN where none is taken are refused")
    func refusals() throws {
        let vectors = try SecurIDTests.vectors()
        let v2 = try #require(vectors.first { $0.format == "v2" && $0.password.isEmpty })
        let token = try decodeSecurID(v2.token, password: nil, deviceID: nil)
        #expect(throws: TokenFormatError.expired(expiryDay: token.expiryDay)) {
            try TokenImporter.read(TokenImportRequest(data: v2.token), now: token.expiry, oathIDKey: key)
        }
        let bound = try #require(vectors.first { $0.format == "v3" && !$0.password.isEmpty })
        #expect(throws: TokenFormatError.wrongDevice) {
            try TokenImporter.read(
                TokenImportRequest(
                    data: bound.token, password: bound.password, deviceID: "00112233445566778899aabbccddeeff"),
                now: 0, oathIDKey: key)
        }
        let pinless = try #require(vectors.first { $0.format == "v3-30s" && $0.pin.isEmpty })
        #expect(throws: TokenFormatError.invalidPIN(reason: "this token takes no PIN")) {
            try TokenImporter.read(TokenImportRequest(data: pinless.token, pin: "1234"), now: 0, oathIDKey: key)
        }
        #expect(throws: TokenFormatError.self) {
            try TokenImporter.read(TokenImportRequest(data: v2.token, pin: "12"), now: 0, oathIDKey: key)
        }
    }

    @Test("OATH ids are stable per key, differ per key and per secret; HOTP records carry their counter")
    func oathRecords() throws {
        let uri = "otpauth://hotp/Example:me?secret=JBSWY3DPEHPK3PXP&counter=7&digits=8"
        let (kind, records) = try TokenImporter.read(TokenImportRequest(data: uri), now: 0, oathIDKey: key)
        let record = try #require(records.first)
        #expect(kind == .otpauth && record.kind == "hotp" && record.counter == 7 && record.interval == 0)
        let again = try TokenImporter.read(TokenImportRequest(data: uri), now: 99, oathIDKey: key).tokens
        #expect(again.first?.serial == record.serial)
        let otherKey = try TokenImporter.read(TokenImportRequest(data: uri), now: 0, oathIDKey: [2]).tokens
        #expect(otherKey.first?.serial != record.serial)
        #expect(record.serial.hasPrefix("oath-") && record.serial.count == 21)
        #expect(try TokenRecord.decode(record.encoded()) == record)
        #expect(
            try record.code(at: 0).code
                == OATHCode.hotp(secret: Base32.decode("JBSWY3DPEHPK3PXP"), counter: 7, digits: 8, algorithm: .sha1))
        #expect(throws: TokenFormatError.self) {
            try TokenImporter.read(TokenImportRequest(data: uri, pin: "1234"), now: 0, oathIDKey: key)
        }
        let batch = String(
            decoding: try Peer.vector("otpauth-migration/example_export.txt"), as: UTF8.self
        ).split(separator: "\n").first {
            $0.hasPrefix("otpauth-migration://")
                && $0.contains("CigKEPqlBekzoNEukL7qlsjBCDYSDnBpQHJhc3BiZXJyeXBpIAEoATACCjUK")
        }
        let migrated = try TokenImporter.read(
            TokenImportRequest(data: String(try #require(batch))), now: 0, oathIDKey: key)
        #expect(migrated.kind == .otpauthMigration && migrated.tokens.count == 2)
    }

    @Test("a damaged record does not read")
    func damagedRecords() throws {
        let (_, records) = try TokenImporter.read(
            TokenImportRequest(data: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"), now: 0, oathIDKey: key)
        let bytes = try #require(records.first).encoded()
        for cut in [0, 1, 9, bytes.count - 1] {
            #expect(throws: TokenFormatError.self) { try TokenRecord.decode(Array(bytes.prefix(cut))) }
        }
        var wrongVersion = bytes
        wrongVersion[8] = 9
        #expect(throws: TokenFormatError.invalidField(field: "record", reason: "unknown record version")) {
            try TokenRecord.decode(wrongVersion)
        }
    }

    @Test("a text field reads only when it is UTF-8, a replacement character included")
    func textFieldsAreUTF8() throws {
        let (_, records) = try TokenImporter.read(
            TokenImportRequest(data: "otpauth://totp/Issuer:x?secret=JBSWY3DPEHPK3PXP"), now: 0, oathIDKey: key)
        var record = try #require(records.first)
        // A literal U+FFFD is text like any other: it reads back as it was.
        record.pin = "p\u{FFFD}n"
        let bytes = record.encoded()
        #expect(try TokenRecord.decode(bytes) == record)
        // The pin's three bytes of U+FFFD (after the version field and the serial) made invalid, in turn
        // as a lone continuation byte, a truncated sequence, and an overlong encoding.
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: [0xEF, 0xBF, 0xBD]) })
        for invalid: [UInt8] in [[0x80, 0x80, 0x80], [0xEF, 0xBF, 0x41], [0xC0, 0xAF, 0x41]] {
            var damaged = bytes
            damaged.replaceSubrange(at..<at + 3, with: invalid)
            #expect(throws: TokenFormatError.invalidField(field: "record", reason: "a text field is not UTF-8")) {
                try TokenRecord.decode(damaged)
            }
        }
    }
}
