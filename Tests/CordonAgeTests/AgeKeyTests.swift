import Crypto
import Foundation
import Testing

@testable import CordonAge

@Suite("CordonAge: keys, Bech32 and the app-key derivation")
struct AgeKeyTests {
    /// The identity and recipient given in the C2SP age spec ("The X25519 recipient type").
    @Test func specExampleKeysRoundTrip() throws {
        let identity = try AgeX25519Identity(
            encoded: "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        #expect(identity.privateKey.rawRepresentation == Data(repeating: 0x42, count: 32))
        #expect(identity.recipient.encoded == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        #expect(identity.encoded == "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        #expect(try AgeX25519Recipient(encoded: identity.recipient.encoded) == identity.recipient)
    }

    @Test(arguments: [
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEY",  // checksum
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4egaex",  // mixed case
        "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj",  // a recipient, not an identity
        "AGE-SECRET-KEY-1", "", "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZ",
    ])
    func malformedIdentitiesAreRefusedByName(_ text: String) {
        #expect(throws: AgeError.self) { try AgeX25519Identity(encoded: text) }
    }

    @Test func recipientsRefuseIdentitiesAndGarbage() {
        #expect(throws: AgeError.self) {
            try AgeX25519Recipient(
                encoded: "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        }
        #expect(throws: AgeError.self) { try AgeX25519Recipient(encoded: "age1qqqqqqqqqqqqqqqqq") }
    }

    /// The documented derivation: HKDF-SHA256(app key, salt empty, info label, 32 bytes).
    @Test func appKeyDerivationIsDocumentedAndDeterministic() throws {
        let appKey = SymmetricKey(data: Array(repeating: 7, count: 32))
        let identity = AgeX25519Identity.derived(fromAppKey: appKey)
        let seed = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: appKey, info: Array("io.cordon.age.identity.v1".utf8), outputByteCount: 32)
        #expect(seed.withUnsafeBytes { Data($0) } == identity.privateKey.rawRepresentation)
        #expect(AgeX25519Identity.derived(fromAppKey: appKey).encoded == identity.encoded)
        let other = AgeX25519Identity.derived(fromAppKey: SymmetricKey(data: Array(repeating: 8, count: 32)))
        #expect(other.recipient != identity.recipient)
        // A file to the derived recipient opens with the derived identity, and not with another.
        let file = try AgeTestSupport.encrypt(Array("note".utf8), recipients: [identity.recipient])
        #expect(AgeTestSupport.decrypt(file, identities: [identity]).output == Array("note".utf8))
        #expect(AgeTestSupport.decrypt(file, identities: [other]).error?.failureClass == .noMatch)
    }

    @Test func encryptorRefusesScryptBesideOtherRecipients() throws {
        let scrypt = try AgeScryptRecipient(passphrase: "pass", workFactor: 10)
        #expect(throws: AgeError.scryptNotAlone) {
            try AgeEncryptor(recipients: [scrypt, AgeX25519Identity.generate().recipient])
        }
        #expect(throws: AgeError.invalidArgument("no recipients")) { try AgeEncryptor(recipients: []) }
        #expect(throws: AgeError.self) { try AgeScryptRecipient(passphrase: "") }
    }

    @Test func scryptRoundTripsAndRefusesWrongPassphraseAndHighWorkFactor() throws {
        let file = try AgeTestSupport.encrypt(
            Array("secret".utf8), recipients: [AgeScryptRecipient(passphrase: "correct horse", workFactor: 10)])
        #expect(
            AgeTestSupport.decrypt(file, identities: [try AgeScryptIdentity(passphrase: "correct horse")]).output
                == Array("secret".utf8))
        #expect(
            AgeTestSupport.decrypt(file, identities: [try AgeScryptIdentity(passphrase: "wrong")]).error
                == .noIdentityMatched(stanzaTypes: ["scrypt"]))
        let bounded = try AgeScryptIdentity(passphrase: "correct horse", maximumWorkFactor: 9)
        #expect(AgeTestSupport.decrypt(file, identities: [bounded]).error == .workFactorTooLarge(10, maximum: 9))
    }

    @Test func headerErrorsNameTheLine() {
        let identity = AgeX25519Identity.generate()
        let cases: [(String, AgeError)] = [
            ("age-encryption.org/v2\n", .unsupportedVersion("v2")),
            (
                "age-encryption.org/v1\n-> X25519\n\n-- x\n",
                .malformedHeader(line: 4, reason: "a stanza must start with '-> ' (or the MAC line with '--- ')")
            ),
            (
                "age-encryption.org/v1\n->  X\n\n",
                .malformedHeader(line: 2, reason: "a stanza argument is empty or not printable ASCII")
            ),
            (
                "age-encryption.org/v1\n--- " + String(repeating: "A", count: 43) + "\n",
                .malformedHeader(line: 2, reason: "the header has no recipient stanza")
            ),
            ("age-encryption.org/v1\n-> X\n", .truncated("header")),
        ]
        for (text, expected) in cases {
            #expect(AgeTestSupport.decrypt(Array(text.utf8), identities: [identity]).error == expected, "\(text)")
        }
    }
}
