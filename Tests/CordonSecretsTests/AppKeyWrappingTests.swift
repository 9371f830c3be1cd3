import CordonSecrets
import Foundation
import Testing

/// Random app keys wrapped under the master key, and the keystore format the master key's
/// wrapping authenticates (docs/ARCHITECTURE.md, "Keys").
@Suite struct AppKeyWrappingTests {
    let custody = KeyCustody()

    private func bytes(of secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    @Test func anAppKeyIsRandomAndOpensAsItsOwnAppsUnderItsMasterKey() throws {
        let master = custody.makeMasterKey()
        let key = custody.makeAppKey()
        #expect(key.count == 32)
        #expect(bytes(of: key) != bytes(of: custody.makeAppKey()))
        let wrapped = try custody.wrapAppKey(key, appId: "com.example.notes", master: master)
        #expect(!wrapped.contains(subsequence: bytes(of: key)))
        let opened = try custody.unwrapAppKey(wrapped, appId: "com.example.notes", master: master)
        #expect(bytes(of: opened) == bytes(of: key))
        // Not the derivation: nothing computes it from the master key.
        #expect(bytes(of: key) != bytes(of: custody.legacyAppKey(master: master, appId: "com.example.notes")))
    }

    @Test func aWrappedAppKeyDoesNotOpenAsAnotherAppsOrUnderAnotherMasterKey() throws {
        let master = custody.makeMasterKey()
        let wrapped = try custody.wrapAppKey(custody.makeAppKey(), appId: "com.example.notes", master: master)
        #expect(throws: KeyCustodyError.appKeyRejected) {
            try custody.unwrapAppKey(wrapped, appId: "com.example.mail", master: master)
        }
        #expect(throws: KeyCustodyError.appKeyRejected) {
            try custody.unwrapAppKey(wrapped, appId: "com.example.notes", master: custody.makeMasterKey())
        }
        var tampered = wrapped
        tampered[20] ^= 1
        #expect(throws: KeyCustodyError.appKeyRejected) {
            try custody.unwrapAppKey(tampered, appId: "com.example.notes", master: master)
        }
    }

    @Test func theMasterKeysWrappingSaysWhetherAppKeysAreDerivedOrRandom() throws {
        let master = custody.makeMasterKey()
        let stretched = try custody.stretch(passcode: "2468", kdf: .insecureFast(salt: custody.makeSalt()))
        for secret in [nil, custody.makeSecret()] {
            let current = try custody.wrap(
                master, stretched: stretched, hardwareSecret: secret, kdf: .insecureFast(salt: []))
            let old = try custody.wrap(
                master, stretched: stretched, hardwareSecret: secret, kdf: .insecureFast(salt: []),
                format: .derivedAppKeys)
            let openedCurrent = try custody.unwrapReportingFormat(current, stretched: stretched, hardwareSecret: secret)
            let openedOld = try custody.unwrapReportingFormat(old, stretched: stretched, hardwareSecret: secret)
            #expect(openedCurrent.format == .randomAppKeys)
            #expect(openedOld.format == .derivedAppKeys)
            #expect(bytes(of: openedCurrent.key) == bytes(of: master))
            #expect(bytes(of: openedOld.key) == bytes(of: master))
            // The format is authenticated: the wrong wrapping key opens neither.
            let other = try custody.stretch(passcode: "1357", kdf: .insecureFast(salt: custody.makeSalt()))
            #expect(throws: KeyCustodyError.wrongPasscode) {
                try custody.unwrapReportingFormat(old, stretched: other, hardwareSecret: secret)
            }
        }
        #expect(KeystoreFormat.current == .randomAppKeys)
    }

    @Test func theRecoveryWrappingSaysItsFormatToo() throws {
        let master = custody.makeMasterKey()
        let recovery = custody.makeSecret()
        let current = try custody.wrapForRecovery(master, recoveryKey: recovery)
        let old = try custody.wrapForRecovery(master, recoveryKey: recovery, format: .derivedAppKeys)
        #expect(try custody.unwrapWithRecoveryReportingFormat(current, recoveryKey: recovery).format == .randomAppKeys)
        #expect(try custody.unwrapWithRecoveryReportingFormat(old, recoveryKey: recovery).format == .derivedAppKeys)
        #expect(bytes(of: try custody.unwrapWithRecovery(old, recoveryKey: recovery)) == bytes(of: master))
        #expect(throws: KeyCustodyError.wrongPasscode) {
            try custody.unwrapWithRecoveryReportingFormat(old, recoveryKey: custody.makeSecret())
        }
    }

    @Test func aPasscodeWrappingOfBeforeStillOpens() throws {
        let master = custody.makeMasterKey()
        let kdf = KDFParameters.insecureFast(salt: custody.makeSalt())
        let old = try custody.wrap(master, passcode: "passcode", kdf: kdf, format: .derivedAppKeys)
        #expect(bytes(of: try custody.unwrap(old, passcode: "passcode")) == bytes(of: master))
        #expect(throws: KeyCustodyError.wrongPasscode) { try custody.unwrap(old, passcode: "other") }
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
