import CordonTrust
import Foundation
import Testing

@Suite("PolicySigning and TrustStore")
struct PolicySigningTests {
    let document = Data(#"{"version": 1, "apps": {"org.example.notes": {"pasteboard": "deny"}}}"#.utf8)

    let name = "10-base.json"
    /// The tests' clock: 2026-01-01T00:00:00Z.
    let now: Double = 1_767_225_600

    /// The `.sig` text of `document` signed as `name` with serial 7, valid for a day.
    func sign(_ document: Data, _ privateKey: String) throws -> String {
        try PolicySigning.sign(document, name: name, serial: 7, expires: now + 86400, privateKey: privateKey).text
    }

    /// Verifies as installed under `name` at `now`; returns the key id.
    func verify(_ store: TrustStore, _ document: Data, _ signature: String?) throws -> String {
        try store.verify(document, name: name, now: now, signature: signature).keyId
    }

    /// A trust store holding exactly the given public key file texts.
    func store(trusting publicKeys: String...) -> TrustStore {
        var store = TrustStore()
        for (index, key) in publicKeys.enumerated() { store.add(publicKey: key, path: "/test/key\(index).pub") }
        return store
    }

    /// Whether `error` is `.malformed`.
    func isMalformed(_ error: PolicySignatureError?) -> Bool {
        guard case .malformed = error else { return false }
        return true
    }

    /// The whitespace-separated fields of a one-line key or signature file.
    func fields(_ text: String) -> [String] { text.split(whereSeparator: \.isWhitespace).map(String.init) }

    // MARK: - Key pairs

    @Test func keyPairFilesHaveTheDocumentedFormat() throws {
        let pair = PolicySigning.generateKeyPair()
        #expect(pair.privateKey.hasSuffix("\n"))
        #expect(pair.publicKey.hasSuffix("\n"))
        #expect(pair.privateKey.filter { $0 == "\n" }.count == 1, "one line")
        #expect(pair.publicKey.filter { $0 == "\n" }.count == 1, "one line")

        let privateFields = fields(pair.privateKey)
        try #require(privateFields.count == 2)
        #expect(privateFields[0] == "cordon-policy-private-key-v1")
        #expect(Data(base64Encoded: privateFields[1])?.count == 32, "a 32-byte Ed25519 seed")

        let publicFields = fields(pair.publicKey)
        try #require(publicFields.count == 2)
        #expect(publicFields[0] == "cordon-policy-public-key-v1")
        #expect(Data(base64Encoded: publicFields[1])?.count == 32, "a 32-byte Ed25519 public key")
    }

    @Test func keyIdIsSixteenLowercaseHexCharactersMatchingThePublicKey() throws {
        let pair = PolicySigning.generateKeyPair()
        #expect(pair.keyId.count == 16)
        #expect(pair.keyId.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(try PolicySigning.keyId(publicKey: pair.publicKey) == pair.keyId)
        // Without the trailing newline too.
        let trimmed = pair.publicKey.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try PolicySigning.keyId(publicKey: trimmed) == pair.keyId)
    }

    @Test func everyKeyPairIsNew() {
        let first = PolicySigning.generateKeyPair()
        let second = PolicySigning.generateKeyPair()
        #expect(first.privateKey != second.privateKey)
        #expect(first.publicKey != second.publicKey)
        #expect(first.keyId != second.keyId)
    }

    @Test func keyIdRejectsWhatIsNotAPublicKeyFile() {
        let pair = PolicySigning.generateKeyPair()
        for text in [
            pair.privateKey, "", "cordon-policy-public-key-v1", "cordon-policy-public-key-v1 !!!not-base64!!!",
        ] {
            let error = #expect(throws: PolicySignatureError.self) {
                _ = try PolicySigning.keyId(publicKey: text)
            }
            #expect(isMalformed(error), "\(String(describing: error))")
        }
    }

    // MARK: - Signing and verifying

    @Test func signatureRoundTrips() throws {
        let pair = PolicySigning.generateKeyPair()
        let signature = try sign(document, pair.privateKey)
        let lines = signature.split(separator: "\n").map(String.init)
        try #require(lines.count == 6)
        #expect(lines[0] == "cordon-policy-signature-v2")
        #expect(lines[1] == "name=10-base.json")
        #expect(lines[2] == "serial=7")
        #expect(lines[3] == "expires=2026-01-02T00:00:00Z")
        #expect(lines[4] == "key=\(pair.keyId)")
        #expect(Data(base64Encoded: String(lines[5].dropFirst("signature=".count)))?.count == 64)
        #expect(signature.hasSuffix("\n"))

        let store = store(trusting: pair.publicKey)
        #expect(store.requiresSignatures)
        let verified = try store.verify(document, name: name, now: now, signature: signature)
        #expect(verified.keyId == pair.keyId)
        #expect(verified.name == name && verified.serial == 7 && verified.expires == now + 86400)
        #expect(try PolicySignature.parse(signature) == verified, "the text round-trips")
    }

    @Test func theSignedMessageIsTheDocumentedHeaderAndTheBytes() throws {
        let pair = PolicySigning.generateKeyPair()
        let signature = try PolicySigning.sign(
            document, name: name, serial: 42, expires: 1_798_761_600, privateKey: pair.privateKey)
        var expected = Data("cordon-policy-v2\nname=10-base.json\nserial=42\nexpires=2027-01-01T00:00:00Z\n".utf8)
        expected.append(document)
        #expect(signature.message(for: document) == expected)
        let verified = try store(trusting: pair.publicKey).verify(
            document, name: name, now: now, signature: signature.text)
        #expect(verified == signature)
    }

    @Test func aSignatureForAnotherNameIsRefusedNamingTheSignedName() throws {
        let pair = PolicySigning.generateKeyPair()
        let lenient = try PolicySigning.sign(
            document, name: "90-lenient.json", serial: 1, expires: now + 60, privateKey: pair.privateKey)
        let store = store(trusting: pair.publicKey)
        let error = #expect(throws: PolicySignatureError.wrongName(signed: "90-lenient.json", installed: name)) {
            try verify(store, document, lenient.text)
        }
        #expect(error?.description.contains("90-lenient.json") == true)
        // Rewriting the name in the .sig breaks the signature: the name is signed.
        let renamed = lenient.text.replacingOccurrences(of: "name=90-lenient.json", with: "name=\(name)")
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try verify(store, document, renamed) }
    }

    @Test func anExpiredSignatureIsRefusedAndItsExpiryIsSigned() throws {
        let pair = PolicySigning.generateKeyPair()
        let signature = try PolicySigning.sign(
            document, name: name, serial: 1, expires: now, privateKey: pair.privateKey)
        let store = store(trusting: pair.publicKey)
        #expect(throws: PolicySignatureError.expired("2026-01-01T00:00:00Z")) {
            try verify(store, document, signature.text)
        }
        #expect(try store.verify(document, name: name, now: now - 1, signature: signature.text).serial == 1)
        let extended = signature.text.replacingOccurrences(of: "expires=2026", with: "expires=2036")
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try verify(store, document, extended) }
    }

    @Test func aVersionOneSignatureIsRefused() throws {
        let store = store(trusting: PolicySigning.generateKeyPair().publicKey)
        let v1 = "cordon-policy-signature-v1 0123456789abcdef \(Data(repeating: 1, count: 64).base64EncodedString())\n"
        let error = #expect(throws: PolicySignatureError.unsupportedVersion) { try verify(store, document, v1) }
        #expect(error?.description.contains("cordon policy sign") == true)
    }

    @Test func datesAndSerialsParseStrictly() {
        #expect(PolicySignature.parseDate("2027-01-01") == 1_798_761_600)
        #expect(PolicySignature.parseDate("2027-01-01T00:00:00Z") == 1_798_761_600)
        for bad in ["2027-01-01T00:00:00", "2027-13-01", "tomorrow", "", "2027-01-01T00:00:00+02:00"] {
            #expect(PolicySignature.parseDate(bad) == nil, "\(bad)")
        }
        #expect(PolicySignature.parseSerial("42") == 42)
        for bad in ["-1", "+1", "", "1e3", "99999999999999999999", "４２"] {
            #expect(PolicySignature.parseSerial(bad) == nil, "\(bad)")
        }
        #expect(PolicySignature.format(1_798_761_600.9) == "2027-01-01T00:00:00Z")
    }

    @Test func verifiesAgainstTheRightKeyAmongSeveral() throws {
        let first = PolicySigning.generateKeyPair()
        let second = PolicySigning.generateKeyPair()
        let store = store(trusting: first.publicKey, second.publicKey)
        #expect(store.keys.count == 2)
        #expect(try verify(store, document, sign(document, first.privateKey)) == first.keyId)
        #expect(try verify(store, document, sign(document, second.privateKey)) == second.keyId)
    }

    @Test func signingRejectsAMalformedPrivateKey() {
        let pair = PolicySigning.generateKeyPair()
        let shortSeed = "cordon-policy-private-key-v1 \(Data(repeating: 7, count: 16).base64EncodedString())\n"
        for text in [pair.publicKey, "", "cordon-policy-private-key-v1 %%%", shortSeed] {
            let error = #expect(throws: PolicySignatureError.self) {
                _ = try sign(document, text)
            }
            #expect(isMalformed(error), "\(String(describing: error))")
        }
    }

    @Test func missingSignatureIsReported() {
        let store = store(trusting: PolicySigning.generateKeyPair().publicKey)
        #expect(throws: PolicySignatureError.missing) { try verify(store, document, nil) }
    }

    @Test(arguments: [
        "",
        "garbage",
        "cordon-policy-signature-v2 0123456789abcdef AAAA",
        "cordon-policy-signature-v2\nname=a.json\nserial=1\nexpires=2027-01-01T00:00:00Z\nkey=00\n",
        "cordon-policy-signature-v2\nname=a.json\nserial=x\nexpires=2027-01-01T00:00:00Z\nkey=00\nsignature=AAAA\n",
        "cordon-policy-signature-v2\nname=a.json\nserial=1\nexpires=never\nkey=00\nsignature=AAAA\n",
        "cordon-policy-signature-v2\nname=../a.json\nserial=1\nexpires=2027-01-01\nkey=00\nsignature=AAAA\n",
        "cordon-policy-signature-v2\nserial=1\nname=a.json\nexpires=2027-01-01\nkey=00\nsignature=AAAA\n",
        "cordon-policy-signature-v2\nname=a.json\nserial=1\nexpires=2027-01-01\nkey=00\nsignature=!!!\n",
    ])
    func malformedSignatureTextIsReported(text: String) {
        let store = store(trusting: PolicySigning.generateKeyPair().publicKey)
        let error = #expect(throws: PolicySignatureError.self) {
            _ = try verify(store, document, text)
        }
        #expect(isMalformed(error), "\(String(describing: error))")
    }

    @Test func signatureByAnUntrustedKeyIsReportedWithItsId() throws {
        let trusted = PolicySigning.generateKeyPair()
        let stranger = PolicySigning.generateKeyPair()
        let signature = try sign(document, stranger.privateKey)
        let store = store(trusting: trusted.publicKey)
        #expect(throws: PolicySignatureError.untrustedKey(stranger.keyId)) {
            try verify(store, document, signature)
        }
        #expect(throws: PolicySignatureError.untrustedKey(stranger.keyId)) {
            try verify(TrustStore(), document, signature)
        }
    }

    @Test func tamperedDocumentIsInvalid() throws {
        let pair = PolicySigning.generateKeyPair()
        let signature = try sign(document, pair.privateKey)
        let store = store(trusting: pair.publicKey)
        for index in [document.startIndex, document.startIndex + document.count / 2, document.endIndex - 1] {
            var tampered = document
            tampered[index] ^= 0x01
            #expect(throws: PolicySignatureError.invalid(pair.keyId)) {
                try verify(store, tampered, signature)
            }
        }
        var extended = document
        extended.append(0x0A)
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try verify(store, extended, signature) }
    }

    @Test func signatureMovedToAnotherDocumentFails() throws {
        let pair = PolicySigning.generateKeyPair()
        let other = Data(#"{"version": 1}"#.utf8)
        let signature = try sign(document, pair.privateKey)
        let otherSignature = try sign(other, pair.privateKey)
        let store = store(trusting: pair.publicKey)
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try verify(store, other, signature) }
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) {
            try verify(store, document, otherSignature)
        }
        #expect(try verify(store, other, otherSignature) == pair.keyId)
    }

    @Test func signatureBytesOfTheWrongLengthAreInvalid() throws {
        let pair = PolicySigning.generateKeyPair()
        let store = store(trusting: pair.publicKey)
        let short = PolicySignature(
            name: name, serial: 7, expires: now + 86400, keyId: pair.keyId, signature: Data(repeating: 1, count: 10)
        ).text
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try verify(store, document, short) }
    }

    @Test func errorDescriptionsNameTheKey() {
        #expect(PolicySignatureError.untrustedKey("0123456789abcdef").description.contains("0123456789abcdef"))
        #expect(PolicySignatureError.invalid("fedcba9876543210").description.contains("fedcba9876543210"))
        #expect(PolicySignatureError.malformed("detail").description.contains("detail"))
        #expect(PolicySignatureError.rollback(serial: 41, highest: 42).description.contains("serial 41"))
        #expect(!PolicySignatureError.missing.description.isEmpty)
    }

    // MARK: - Trust directory

    @Test func emptyStoreTrustsNothing() {
        let store = TrustStore()
        #expect(!store.requiresSignatures)
        #expect(store.keys.isEmpty)
        #expect(store.problems.isEmpty)
    }

    @Test func addingABadKeyRecordsAProblemAndTrustsNothing() {
        var store = TrustStore()
        store.add(publicKey: "not a key", path: "/etc/cordon/trust/bad.pub")
        #expect(!store.requiresSignatures)
        #expect(store.problems.count == 1)
        #expect(store.problems.first?.hasPrefix("/etc/cordon/trust/bad.pub") == true)
    }

    @Test func loadsTrustedKeysFromADirectory() throws {
        let directory = NSTemporaryDirectory() + "cordon-trust-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let good = PolicySigning.generateKeyPair()
        let ignored = PolicySigning.generateKeyPair()
        let shortKey = "cordon-policy-public-key-v1 \(Data(repeating: 9, count: 16).base64EncodedString())\n"
        try good.publicKey.write(toFile: directory + "/admin.pub", atomically: true, encoding: .utf8)
        try "this is not a key\n".write(toFile: directory + "/broken.pub", atomically: true, encoding: .utf8)
        try shortKey.write(toFile: directory + "/short.pub", atomically: true, encoding: .utf8)
        // Not `.pub`: ignored, even though it holds a valid public key.
        try ignored.publicKey.write(toFile: directory + "/other.pub.disabled", atomically: true, encoding: .utf8)
        try ignored.publicKey.write(toFile: directory + "/README", atomically: true, encoding: .utf8)
        // A `.pub` that cannot be read as a file.
        try FileManager.default.createDirectory(atPath: directory + "/subdir.pub", withIntermediateDirectories: false)

        let store = TrustStore.load(directory: directory)
        #expect(store.requiresSignatures)
        #expect(Set(store.keys.keys) == [good.keyId])
        #expect(store.problems.count == 3)
        for name in ["broken.pub", "short.pub", "subdir.pub"] {
            #expect(store.problems.contains { $0.hasPrefix(directory + "/" + name + ":") }, "\(name) is reported")
        }
        #expect(!store.problems.contains { $0.contains("other.pub.disabled") || $0.contains("README") })

        let signature = try sign(document, good.privateKey)
        #expect(try verify(store, document, signature) == good.keyId)
        let ignoredSignature = try sign(document, ignored.privateKey)
        #expect(throws: PolicySignatureError.untrustedKey(ignored.keyId)) {
            try verify(store, document, ignoredSignature)
        }
    }

    @Test func missingDirectoryTrustsNothing() {
        let store = TrustStore.load(directory: "/nonexistent/cordon-trust-" + UUID().uuidString)
        #expect(!store.requiresSignatures)
        #expect(store.keys.isEmpty)
        #expect(store.problems.isEmpty)
    }

    @Test func directoryWithOnlyBadKeysTrustsNothingButReportsThem() throws {
        let directory = NSTemporaryDirectory() + "cordon-trust-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "nonsense\n".write(toFile: directory + "/bad.pub", atomically: true, encoding: .utf8)

        let store = TrustStore.load(directory: directory)
        #expect(!store.requiresSignatures)
        #expect(store.problems.count == 1)
    }
}
