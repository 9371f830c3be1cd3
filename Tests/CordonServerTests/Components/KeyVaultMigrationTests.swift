import CordonAppStorage
import CordonLifecycle
import CordonProtocol
import CordonSecrets
import CordonStore
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// A container made before random app keys (its master key wrapped as `cordon.keystore.v1`, app
/// keys derived) migrated by `KeyVault` at the first passcode check, against a fake host
/// (docs/ARCHITECTURE.md, "Keys").
@Suite struct KeyVaultMigrationTests {
    typealias Fixture = ComponentFixture<KeyVault>
    static let notes = "com.example.notes"
    static let mail = "com.example.mail"
    static let audited = "com.example.audited"
    static let master: [UInt8] = Array(repeating: 0x5A, count: 32)

    /// Lays out a container of before: a v1 keystore under `2468`, a record of the notes app under
    /// its derived key, the mail app at legacy generation 1, an audit record of a third app.
    static func makeOldContainer(_ host: FakeHost) { makeOldContainer(host, recoveryKey: nil) }

    /// As ``makeOldContainer(_:)``, with a recovery wrapping of before under `recoveryKey`.
    static func makeOldContainer(_ host: FakeHost, recoveryKey: SecureBytes?) {
        do {
            let custody = KeyCustody()
            let master = SecureBytes(copying: Self.master)
            let kdf = KDFParameters.insecureFast(salt: custody.makeSalt())
            let stretched = try custody.stretch(passcode: "2468", kdf: kdf)
            var wrapped = try custody.wrap(
                master, stretched: stretched, hardwareSecret: nil, kdf: kdf, format: .derivedAppKeys)
            wrapped.recovery = try recoveryKey.map {
                try custody.wrapForRecovery(master, recoveryKey: $0, format: .derivedAppKeys)
            }
            try host.database.saveWrappedKey(wrapped, now: 1)
            _ = try host.database.rotateAppGeneration(appId: mail, now: 1)
            _ = try host.database.appendAudit([
                AuditEntry(time: 1, category: .decision, appId: audited, outcome: "allow", reason: "r")
            ])
            try FileManager.default.createDirectory(
                atPath: AppStorage.directory(dataDirectory: host.configuration.paths.dataDirectory),
                withIntermediateDirectories: true)
            let storage = AppStorage(
                path: AppStorage.path(dataDirectory: host.configuration.paths.dataDirectory, appId: notes),
                appId: notes, appKey: custody.legacyAppKey(master: master, appId: notes))
            try storage.put(namespace: "default", name: "draft", value: Array("before the upgrade".utf8))
            storage.close()
        } catch {
            Issue.record("could not lay out the old container: \(error)")
        }
    }

    /// Checks `2468` as an unlock and installs the key.
    static func unlock(_ fixture: Fixture) async throws {
        try await fixture.run { host, _, _ in
            var machine = LifecycleMachine(configuration: .builtin)
            _ = machine.handle(.start(initialized: true, failedAttempts: 0, lastFailureAt: nil, now: 0))
            _ = machine.handle(.unlockRequested(hasPasscode: true, now: 0))
            host.lifecycle = machine
        }
        #expect(
            try await KeyVaultTests.check("2468", count: 1, in: fixture)
                == .passcodeChecked(correct: true, now: 1_000_000))
        try await fixture.run { _, vault, _ in vault.perform(.install, request: nil) }
    }

    static func bytes(_ key: SecureBytes?) -> [UInt8]? { key?.withUnsafeBytes { Array($0) } }

    @Test func theFirstUnlockWrapsEachDerivedKeyAndReWrapsTheMasterKeyAsV2() async throws {
        try await Fixture.with(configure: Self.makeOldContainer, make: { try KeyVault(host: $0) }) { fixture in
            try await Self.unlock(fixture)
            try await fixture.run { host, vault, _ throws in
                let custody = KeyCustody()
                let master = SecureBytes(copying: Self.master)
                // One row per app that may have data: the storage file, the generation, the audit log.
                let rows = try host.database.wrappedAppKeys()
                #expect(Set(rows.keys) == [Self.notes, Self.mail, Self.audited])
                #expect(
                    Self.bytes(vault.appKey(for: Self.notes))
                        == Self.bytes(custody.legacyAppKey(master: master, appId: Self.notes)))
                #expect(
                    Self.bytes(vault.appKey(for: Self.mail))
                        == Self.bytes(custody.legacyAppKey(master: master, appId: Self.mail, generation: 1)))
                // The record of before reads back.
                let key = try #require(vault.appKey(for: Self.notes))
                let storage = AppStorage(
                    path: AppStorage.path(dataDirectory: host.configuration.paths.dataDirectory, appId: Self.notes),
                    appId: Self.notes, appKey: key)
                defer { storage.close() }
                #expect(
                    Self.bytes(try storage.get(namespace: "default", name: "draft")) == Array("before the upgrade".utf8)
                )
                // The stored keystore is v2, under the same passcode.
                let stored = try #require(try host.database.loadWrappedKey())
                #expect(stored == vault.wrappedKey)
                let stretched = try custody.stretch(passcode: "2468", kdf: stored.kdf)
                let opened = try custody.unwrapReportingFormat(stored, stretched: stretched, hardwareSecret: nil)
                #expect(opened.format == .randomAppKeys)
                #expect(Self.bytes(opened.key) == Self.master)
                // An app in none of the sources gets a fresh random key.
                #expect(
                    Self.bytes(vault.appKey(for: "com.example.new"))
                        != Self.bytes(custody.legacyAppKey(master: master, appId: "com.example.new")))
            }
        }
    }

    @Test func afterTheMigrationAWipedKeyIsNeverDerivedAgain() async throws {
        try await Fixture.with(configure: Self.makeOldContainer, make: { try KeyVault(host: $0) }) { fixture in
            try await Self.unlock(fixture)
            try await fixture.run { host, vault, _ throws in
                vault.destroyingAppKey(Self.notes)
                _ = try host.database.destroyAppKey(appId: Self.notes, now: 2)
                vault.appKeyDestroyed(Self.notes, failed: false)
                vault.perform(.discard, request: nil)
            }
            // A new vault on the same store (a restart): the keystore is v2, nothing migrates again.
            let derived = Self.bytes(
                KeyCustody().legacyAppKey(master: SecureBytes(copying: Self.master), appId: Self.notes))
            try await fixture.run { host, _, _ throws in
                let restarted = try KeyVault(host: host)
                #expect(restarted.wrappedAppKeys[Self.notes] == nil)
            }
            try await Self.unlock(fixture)
            try await fixture.run { host, vault, _ throws in
                let key = try #require(vault.appKey(for: Self.notes))
                #expect(Self.bytes(key) != derived)
                let storage = AppStorage(
                    path: AppStorage.path(dataDirectory: host.configuration.paths.dataDirectory, appId: Self.notes),
                    appId: Self.notes, appKey: key)
                defer { storage.close() }
                #expect(try storage.get(namespace: "default", name: "draft") == nil)
            }
        }
    }

    @Test func aRecoveryWithAWrappingOfBeforeMigratesToo() async throws {
        let recovery = RecoveryKey.generate()
        let formatted = recovery.formatted
        let configure: @Sendable (FakeHost) -> Void = { Self.makeOldContainer($0, recoveryKey: recovery.secret) }
        try await Fixture.with(configure: configure, make: { try KeyVault(host: $0) }) { fixture in
            let input = try await fixture.run { host, vault, _ throws in
                let next = host.nextInput()
                var request = LifecycleRequest(
                    promise: host.loop.makePromise(), encoder: ReplyEncoder(allocator: ByteBufferAllocator()),
                    passcode: "1357")
                request.recoveryKey = try RecoveryKey.parse(formatted)
                vault.perform(.persistAttempts(count: 1, lastFailureAt: nil, then: .checkPasscode), request: request)
                return next
            }
            #expect(try await input.get() == .passcodeChecked(correct: true, now: 1_000_000))
            try await fixture.run { host, vault, _ throws in
                vault.complete(nil, with: .success(()))
                let custody = KeyCustody()
                let master = SecureBytes(copying: Self.master)
                let rows = try host.database.wrappedAppKeys()
                #expect(Set(rows.keys) == [Self.notes, Self.mail, Self.audited])
                let notes = try custody.unwrapAppKey(try #require(rows[Self.notes]), appId: Self.notes, master: master)
                #expect(Self.bytes(notes) == Self.bytes(custody.legacyAppKey(master: master, appId: Self.notes)))
                // Re-wrapped as v2 under the new passcode, with a new recovery key (v2 too).
                let stored = try #require(try host.database.loadWrappedKey())
                let stretched = try custody.stretch(passcode: "1357", kdf: stored.kdf)
                #expect(
                    try custody.unwrapReportingFormat(stored, stretched: stretched, hardwareSecret: nil).format
                        == .randomAppKeys)
                #expect(throws: KeyCustodyError.wrongPasscode) {
                    try custody.unwrapWithRecovery(try #require(stored.recovery), recoveryKey: recovery.secret)
                }
            }
        }
    }

    @Test func aPasscodeChangeOfAContainerOfBeforeMigratesIt() async throws {
        try await Fixture.with(configure: Self.makeOldContainer, make: { try KeyVault(host: $0) }) { fixture in
            let input = try await fixture.run { host, vault, _ throws in
                let next = host.nextInput()
                var request = LifecycleRequest(
                    promise: host.loop.makePromise(), encoder: ReplyEncoder(allocator: ByteBufferAllocator()),
                    passcode: "2468")
                request.newPasscode = "1357"
                vault.perform(
                    .persistAttempts(count: 1, lastFailureAt: nil, then: .rewrapMasterKey), request: request)
                return next
            }
            #expect(try await input.get() == .passcodeChecked(correct: true, now: 1_000_000))
            try await fixture.run { host, vault, _ throws in
                vault.complete(nil, with: .success(()))
                let custody = KeyCustody()
                #expect(Set(try host.database.wrappedAppKeys().keys) == [Self.notes, Self.mail, Self.audited])
                let stored = try #require(try host.database.loadWrappedKey())
                #expect(stored == vault.wrappedKey)
                let stretched = try custody.stretch(passcode: "1357", kdf: stored.kdf)
                let opened = try custody.unwrapReportingFormat(stored, stretched: stretched, hardwareSecret: nil)
                #expect(opened.format == .randomAppKeys)
                #expect(Self.bytes(opened.key) == Self.master)
            }
        }
    }
}
