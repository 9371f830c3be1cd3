import CordonTrust
import Foundation
import Testing

@Suite("PolicySigning and TrustStore")
struct PolicySigningTests {
    let document = Data(#"{"version": 1, "apps": {"org.example.notes": {"pasteboard": "deny"}}}"#.utf8)

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
        let signature = try PolicySigning.sign(document, privateKey: pair.privateKey)
        let signatureFields = fields(signature)
        try #require(signatureFields.count == 3)
        #expect(signatureFields[0] == "cordon-policy-signature-v1")
        #expect(signatureFields[1] == pair.keyId)
        #expect(Data(base64Encoded: signatureFields[2])?.count == 64)
        #expect(signature.hasSuffix("\n"))

        let store = store(trusting: pair.publicKey)
        #expect(store.requiresSignatures)
        #expect(try store.verify(document, signature: signature) == pair.keyId)
    }

    @Test func verifiesAgainstTheRightKeyAmongSeveral() throws {
        let first = PolicySigning.generateKeyPair()
        let second = PolicySigning.generateKeyPair()
        let store = store(trusting: first.publicKey, second.publicKey)
        #expect(store.keys.count == 2)
        #expect(
            try store.verify(document, signature: PolicySigning.sign(document, privateKey: first.privateKey))
                == first.keyId)
        #expect(
            try store.verify(document, signature: PolicySigning.sign(document, privateKey: second.privateKey))
                == second.keyId)
    }

    @Test func signingRejectsAMalformedPrivateKey() {
        let pair = PolicySigning.generateKeyPair()
        let shortSeed = "cordon-policy-private-key-v1 \(Data(repeating: 7, count: 16).base64EncodedString())\n"
        for text in [pair.publicKey, "", "cordon-policy-private-key-v1 %%%", shortSeed] {
            let error = #expect(throws: PolicySignatureError.self) {
                _ = try PolicySigning.sign(document, privateKey: text)
            }
            #expect(isMalformed(error), "\(String(describing: error))")
        }
    }

    @Test func missingSignatureIsReported() {
        let store = store(trusting: PolicySigning.generateKeyPair().publicKey)
        #expect(throws: PolicySignatureError.missing) { try store.verify(document, signature: nil) }
    }

    @Test(arguments: [
        "",
        "garbage",
        "cordon-policy-signature-v1",
        "cordon-policy-signature-v1 0123456789abcdef",
        "cordon-policy-signature-v1 0123456789abcdef !!!not-base64!!!",
        "cordon-policy-signature-v1 0123456789abcdef AAAA extra",
        "cordon-policy-signature-v2 0123456789abcdef AAAA",
    ])
    func malformedSignatureTextIsReported(text: String) {
        let store = store(trusting: PolicySigning.generateKeyPair().publicKey)
        let error = #expect(throws: PolicySignatureError.self) {
            _ = try store.verify(document, signature: text)
        }
        #expect(isMalformed(error), "\(String(describing: error))")
    }

    @Test func signatureByAnUntrustedKeyIsReportedWithItsId() throws {
        let trusted = PolicySigning.generateKeyPair()
        let stranger = PolicySigning.generateKeyPair()
        let signature = try PolicySigning.sign(document, privateKey: stranger.privateKey)
        let store = store(trusting: trusted.publicKey)
        #expect(throws: PolicySignatureError.untrustedKey(stranger.keyId)) {
            try store.verify(document, signature: signature)
        }
        #expect(throws: PolicySignatureError.untrustedKey(stranger.keyId)) {
            try TrustStore().verify(document, signature: signature)
        }
    }

    @Test func tamperedDocumentIsInvalid() throws {
        let pair = PolicySigning.generateKeyPair()
        let signature = try PolicySigning.sign(document, privateKey: pair.privateKey)
        let store = store(trusting: pair.publicKey)
        for index in [document.startIndex, document.startIndex + document.count / 2, document.endIndex - 1] {
            var tampered = document
            tampered[index] ^= 0x01
            #expect(throws: PolicySignatureError.invalid(pair.keyId)) {
                try store.verify(tampered, signature: signature)
            }
        }
        var extended = document
        extended.append(0x0A)
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try store.verify(extended, signature: signature) }
    }

    @Test func signatureMovedToAnotherDocumentFails() throws {
        let pair = PolicySigning.generateKeyPair()
        let other = Data(#"{"version": 1}"#.utf8)
        let signature = try PolicySigning.sign(document, privateKey: pair.privateKey)
        let otherSignature = try PolicySigning.sign(other, privateKey: pair.privateKey)
        let store = store(trusting: pair.publicKey)
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try store.verify(other, signature: signature) }
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) {
            try store.verify(document, signature: otherSignature)
        }
        #expect(try store.verify(other, signature: otherSignature) == pair.keyId)
    }

    @Test func signatureBytesOfTheWrongLengthAreInvalid() throws {
        let pair = PolicySigning.generateKeyPair()
        let store = store(trusting: pair.publicKey)
        let short = "cordon-policy-signature-v1 \(pair.keyId) \(Data(repeating: 1, count: 10).base64EncodedString())"
        #expect(throws: PolicySignatureError.invalid(pair.keyId)) { try store.verify(document, signature: short) }
    }

    @Test func errorDescriptionsNameTheKey() {
        #expect(PolicySignatureError.untrustedKey("0123456789abcdef").description.contains("0123456789abcdef"))
        #expect(PolicySignatureError.invalid("fedcba9876543210").description.contains("fedcba9876543210"))
        #expect(PolicySignatureError.malformed("detail").description.contains("detail"))
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

        let signature = try PolicySigning.sign(document, privateKey: good.privateKey)
        #expect(try store.verify(document, signature: signature) == good.keyId)
        let ignoredSignature = try PolicySigning.sign(document, privateKey: ignored.privateKey)
        #expect(throws: PolicySignatureError.untrustedKey(ignored.keyId)) {
            try store.verify(document, signature: ignoredSignature)
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
