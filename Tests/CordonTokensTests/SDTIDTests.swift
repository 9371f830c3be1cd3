import CordonTokens
import Foundation
import Testing

@Suite("SDTID files and the bounded XML reader")
struct SDTIDTests {
    func sdtid() throws -> String {
        try #require(try SecurIDTests.vectors().first { $0.format == "sdtid" && $0.password.isEmpty }).token
    }

    @Test("DTDs and entity declarations are refused, with the offset")
    func entities() {
        let billionLaughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
            <TKNBatch>&lol2;</TKNBatch>
            """
        #expect(
            throws: TokenFormatError.malformed(
                format: "xml", offset: 22, reason: "DTDs and entity declarations are refused")
        ) {
            try SDTIDFile.parse(Array(billionLaughs.utf8))
        }
        #expect(throws: TokenFormatError.self) {
            try SDTIDFile.parse(Array("<TKNBatch>&external;</TKNBatch>".utf8))
        }
        #expect(throws: TokenFormatError.self) {
            try SDTIDFile.parse(Array("<TKNBatch><!DOCTYPE x></TKNBatch>".utf8))
        }
    }

    @Test("huge elements, deep nesting, truncation and a wrong root are refused")
    func bounds() throws {
        let huge = "<TKNBatch><TKN><SN>" + String(repeating: "1", count: 10_000) + "</SN></TKN></TKNBatch>"
        #expect(throws: TokenFormatError.self) { try SDTIDFile.parse(Array(huge.utf8)) }
        let deep = String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40)
        #expect(throws: TokenFormatError.self) { try BoundedXML.parse(Array(deep.utf8)) }
        let big = [UInt8](repeating: 0x20, count: 300 * 1024)
        #expect(throws: TokenFormatError.self) { try BoundedXML.parse(big) }
        let file = try sdtid()
        for cut in [10, file.utf8.count / 2, file.utf8.count - 3] {
            #expect(throws: TokenFormatError.self) { try SDTIDFile.parse(Array(file.utf8.prefix(cut))) }
        }
        #expect(
            throws: TokenFormatError.invalidField(field: "TKNBatch", reason: "the root element is <x>, not <TKNBatch>")
        ) {
            try SDTIDFile.parse(Array("<x/>".utf8))
        }
    }

    @Test("predefined and character references decode; elements keep their offsets")
    func references() throws {
        let root = try BoundedXML.parse(Array("<r a='1'><v>&lt;&amp;&#65;&#x42;</v><!-- c --><w/></r>".utf8))
        #expect(root.child("v")?.text == "<&AB")
        #expect(root.child("v")?.offset == 9)
        #expect(root.child("w") != nil)
    }

    @Test("an altered field fails the MAC that covers it; a missing field is named")
    func altered() throws {
        let file = try sdtid()
        let changed = file.replacingOccurrences(of: "<DefDigits>8</DefDigits>", with: "<DefDigits>6</DefDigits>")
        #expect(changed != file)
        #expect(throws: TokenFormatError.checksumMismatch(field: "HeaderMAC")) {
            try SDTIDDecoder.decrypt(SDTIDFile.parse(Array(changed.utf8)), password: nil, deviceID: nil)
        }
        let serial = try #require(file.range(of: "<SN>")).upperBound
        var renamed = file
        renamed.replaceSubrange(serial..<file.index(serial, offsetBy: 1), with: file[serial] == "1" ? "2" : "1")
        #expect(throws: TokenFormatError.self) {
            try SDTIDDecoder.decrypt(SDTIDFile.parse(Array(renamed.utf8)), password: nil, deviceID: nil)
        }
        let noSecret = file.replacingOccurrences(of: "<Secret>", with: "<Other>").replacingOccurrences(
            of: "</Secret>", with: "</Other>")
        #expect(throws: TokenFormatError.invalidField(field: "Secret", reason: "the file has no <Secret>")) {
            try SDTIDDecoder.decrypt(SDTIDFile.parse(Array(noSecret.utf8)), password: nil, deviceID: nil)
        }
    }

    @Test("a file bound to a device serial refuses another device")
    func deviceSerial() throws {
        let file = try sdtid().replacingOccurrences(
            of: "<DeviceSerialNumber> </DeviceSerialNumber>", with: "<DeviceSerialNumber>ab12</DeviceSerialNumber>")
        let parsed = try SDTIDFile.parse(Array(file.utf8))
        #expect(throws: TokenFormatError.deviceIDRequired) {
            try SDTIDDecoder.decrypt(parsed, password: nil, deviceID: nil)
        }
        #expect(throws: TokenFormatError.wrongDevice) {
            try SDTIDDecoder.decrypt(parsed, password: nil, deviceID: "cd34")
        }
    }
}

@Suite("Binding id")
struct BindingIDTests {
    @Test("equals systemd-id128 machine-id --app-specific for this machine")
    func systemdAgrees() throws {
        let tool = try #require(Peer.which("systemd-id128"), "systemd-id128 (systemd) is not installed")
        let machineText = try String(contentsOfFile: "/etc/machine-id", encoding: .utf8)
        let machine = try BindingID.parseMachineID(machineText)
        for name in ["com.example.notes", "io.cordon.cli"] {
            let app = BindingID.applicationID(for: name)
            let peer = try Peer.run(tool, ["machine-id", "--app-specific=\(BindingID.hex(app))"])
            #expect(peer.status == 0)
            #expect(peer.output == BindingID.hex(BindingID.derive(machineID: machine, appID: app)))
        }
    }

    @Test("stable for an app on a machine, different per app and per machine, a v4 UUID")
    func properties() throws {
        let machineA = try BindingID.parseMachineID("0123456789abcdef0123456789abcdef")
        let machineB = try BindingID.parseMachineID("fedcba9876543210fedcba9876543210")
        let app = BindingID.applicationID(for: "com.example.notes")
        let id = BindingID.derive(machineID: machineA, appID: app)
        #expect(id == BindingID.derive(machineID: machineA, appID: app))
        #expect(id != BindingID.derive(machineID: machineB, appID: app))
        #expect(id != BindingID.derive(machineID: machineA, appID: BindingID.applicationID(for: "com.example.other")))
        #expect(id[6] >> 4 == 4 && id[8] >> 6 == 2)
        #expect(throws: TokenFormatError.self) { try BindingID.parseMachineID("xyz") }
    }
}
