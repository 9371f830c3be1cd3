import CordonSecrets
import Crypto
import Foundation
import Testing

@Suite("KeyCustody: wrapping the master key")
struct KeyCustodyTests {
    let custody = KeyCustody()
    let kdf = KDFParameters.insecureFast(salt: Array(0..<16))

    private func bytes(of secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    @Test func insecureFastParametersAreMarkedInsecure() {
        #expect(kdf.rounds == 16)
        #expect(kdf.blockSize == 8)
        #expect(kdf.parallelism == 1)
        #expect(kdf.salt == Array(0..<16))
        #expect(kdf.isInsecure)
        #expect(kdf.memoryBytes == 128 * 16 * 8)
        #expect(!KDFParameters(rounds: 1 << 14, blockSize: 8, parallelism: 1, salt: []).isInsecure)
    }

    @Test func masterKeysAreRandom256BitKeys() {
        let first = custody.makeMasterKey()
        let second = custody.makeMasterKey()
        #expect(first.count == 32)
        #expect(bytes(of: first) != bytes(of: second))
        #expect(bytes(of: first) != [UInt8](repeating: 0, count: 32))
    }

    @Test func saltsAreRandom16Bytes() {
        let first = custody.makeSalt()
        #expect(first.count == 16)
        #expect(first != custody.makeSalt())
    }

    @Test func wrapThenUnwrapRoundTrips() throws {
        let master = custody.makeMasterKey()
        let wrapped = try custody.wrap(master, passcode: "1234-correct", kdf: kdf)
        #expect(wrapped.version == 1)
        #expect(wrapped.kdf == kdf, "the parameters travel with the record")
        #expect(wrapped.sealed.count == 12 + 32 + 16, "nonce, ciphertext, tag")
        let unwrapped = try custody.unwrap(wrapped, passcode: "1234-correct")
        #expect(bytes(of: unwrapped) == bytes(of: master))
    }

    @Test func theSealedBytesDoNotContainTheKey() throws {
        let master = custody.makeMasterKey()
        let wrapped = try custody.wrap(master, passcode: "passcode", kdf: kdf)
        let key = bytes(of: master)
        let sealed = wrapped.sealed
        let containsKey = (0...(sealed.count - key.count)).contains { Array(sealed[$0..<($0 + key.count)]) == key }
        #expect(!containsKey)
    }

    @Test func wrappingTwiceUsesFreshNonces() throws {
        let master = custody.makeMasterKey()
        let first = try custody.wrap(master, passcode: "passcode", kdf: kdf)
        let second = try custody.wrap(master, passcode: "passcode", kdf: kdf)
        #expect(first.sealed != second.sealed)
        #expect(bytes(of: try custody.unwrap(second, passcode: "passcode")) == bytes(of: master))
    }

    // Not "passcode\u{0}": scrypt's HMAC pads short keys with zeros, so a trailing NUL is equivalent.
    @Test(arguments: ["", "passcod", "passcode ", "PASSCODE", "passcode\u{1}", "passcodepasscode"])
    func wrongPasscodeThrows(attempt: String) throws {
        let wrapped = try custody.wrap(custody.makeMasterKey(), passcode: "passcode", kdf: kdf)
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(wrapped, passcode: attempt) }
    }

    @Test func unicodePasscodesWork() throws {
        let master = custody.makeMasterKey()
        let wrapped = try custody.wrap(master, passcode: "pässwörd 🔐", kdf: kdf)
        #expect(bytes(of: try custody.unwrap(wrapped, passcode: "pässwörd 🔐")) == bytes(of: master))
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(wrapped, passcode: "passwort 🔐") }
    }

    @Test func everyTamperedSealedByteIsDetected() throws {
        let wrapped = try custody.wrap(custody.makeMasterKey(), passcode: "passcode", kdf: kdf)
        for index in wrapped.sealed.indices {
            var tampered = wrapped
            tampered.sealed[index] ^= 0x01
            #expect(throws: KeyCustodyError.wrongPasscode, "byte \(index)") {
                try custody.unwrap(tampered, passcode: "passcode")
            }
        }
    }

    @Test func truncatedOrEmptySealedBytesFail() throws {
        let wrapped = try custody.wrap(custody.makeMasterKey(), passcode: "passcode", kdf: kdf)
        for length in [0, 1, 12, 28, wrapped.sealed.count - 1] {
            var truncated = wrapped
            truncated.sealed = Array(wrapped.sealed.prefix(length))
            #expect(throws: KeyCustodyError.wrongPasscode, "length \(length)") {
                try custody.unwrap(truncated, passcode: "passcode")
            }
        }
    }

    @Test func changedKDFParametersFail() throws {
        let wrapped = try custody.wrap(custody.makeMasterKey(), passcode: "passcode", kdf: kdf)
        var otherSalt = wrapped
        otherSalt.kdf.salt[0] ^= 0xFF
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(otherSalt, passcode: "passcode") }
        var otherRounds = wrapped
        otherRounds.kdf.rounds = 32
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(otherRounds, passcode: "passcode") }
    }

    @Test func rewrappingUnderANewPasscodeKeepsTheMasterKey() throws {
        let master = custody.makeMasterKey()
        let old = try custody.wrap(master, passcode: "old-passcode", kdf: kdf)
        let unwrapped = try custody.unwrap(old, passcode: "old-passcode")
        let new = try custody.wrap(unwrapped, passcode: "new-passcode", kdf: .insecureFast(salt: custody.makeSalt()))
        #expect(bytes(of: try custody.unwrap(new, passcode: "new-passcode")) == bytes(of: master))
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(new, passcode: "old-passcode") }
    }

    @Test func wrappedKeysRoundTripThroughJSON() throws {
        let master = custody.makeMasterKey()
        let wrapped = try custody.wrap(master, passcode: "passcode", kdf: kdf)
        let decoded = try JSONDecoder().decode(WrappedKey.self, from: JSONEncoder().encode(wrapped))
        #expect(decoded == wrapped)
        #expect(bytes(of: try custody.unwrap(decoded, passcode: "passcode")) == bytes(of: master))
    }
}

/// The legacy derivation of app keys, which only the migration of a container of before uses.
@Suite("KeyCustody: legacy derived app keys")
struct AppKeyTests {
    let custody = KeyCustody()

    private func bytes(of secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    private func master(_ fill: UInt8) -> SecureBytes { SecureBytes(copying: [UInt8](repeating: fill, count: 32)) }

    @Test func appKeysAre256BitAndNotTheMaster() {
        let master = custody.makeMasterKey()
        let key = custody.legacyAppKey(master: master, appId: "com.example.notes")
        #expect(key.count == 32)
        #expect(bytes(of: key) != bytes(of: master))
    }

    @Test func appKeysAreStableForTheSameAppAndMaster() {
        let master = custody.makeMasterKey()
        let first = custody.legacyAppKey(master: master, appId: "com.example.notes")
        let second = custody.legacyAppKey(master: master, appId: "com.example.notes")
        #expect(bytes(of: first) == bytes(of: second))
        let copy = SecureBytes(copying: bytes(of: master))
        #expect(bytes(of: custody.legacyAppKey(master: copy, appId: "com.example.notes")) == bytes(of: first))
    }

    @Test func appKeysAreDistinctAcrossAppIds() {
        let master = custody.makeMasterKey()
        let ids = ["com.example.notes", "com.example.mail", "com.example.note", "com.example.notes2", "", "a", "A"]
        let keys = ids.map { bytes(of: custody.legacyAppKey(master: master, appId: $0)) }
        #expect(Set(keys).count == ids.count)
    }

    @Test func differentMastersGiveDifferentAppKeys() {
        let a = custody.legacyAppKey(master: master(1), appId: "com.example.notes")
        let b = custody.legacyAppKey(master: master(2), appId: "com.example.notes")
        #expect(bytes(of: a) != bytes(of: b))
    }

    @Test func appKeyIsHKDFSHA256WithTheVersionedInfo() {
        // Containers of before rely on it: their migration wraps exactly this key.
        let masterBytes = [UInt8](repeating: 0x42, count: 32)
        let expected = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: masterBytes), info: Array("cordon.app.v1:com.example.notes".utf8),
            outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
        let derived = custody.legacyAppKey(master: SecureBytes(copying: masterBytes), appId: "com.example.notes")
        #expect(bytes(of: derived) == expected)
    }

    @Test func zeroingTheMasterDoesNotZeroDerivedKeys() {
        let master = custody.makeMasterKey()
        let appKey = custody.legacyAppKey(master: master, appId: "com.example.notes")
        let before = bytes(of: appKey)
        master.zero()
        #expect(bytes(of: appKey) == before, "each key copy is its own buffer")
        appKey.zero()
        #expect(bytes(of: appKey).allSatisfy { $0 == 0 })
    }
}
