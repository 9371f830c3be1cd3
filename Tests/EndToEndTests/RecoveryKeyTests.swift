import CordonKit
import CordonProtocol
import CordonStore
import Foundation
import Testing

/// docs/THREAT-MODEL.md, "Recovery key": `cordon init` prints a recovery key once; on a machine
/// whose TPM does not hold the sealed object (here: the database moved to a second swtpm),
/// `cordon init --recovery` restores the same master key under a new passcode and a new recovery
/// key. Against the real daemon, the real CLI and two TPM simulators.
@Suite(.serialized) struct RecoveryKeyTests {
    static let passcode = "2468"

    func daemon(_ simulator: SoftwareTPM, root: TemporaryDirectory) async throws -> DaemonProcess {
        try await DaemonProcess.started(
            root: root, arguments: ["--tpm-tcti", simulator.tcti, "--backoff-base-seconds", "0", "--reauth-grace", "0"])
    }

    /// The recovery key in `output`, which must hold exactly one.
    func recoveryKey(in output: String) throws -> String {
        let keys = output.matches(of: #/[0-9]{6}(-[0-9]{6}){7}/#).map { String($0.output.0) }
        #expect(keys.count == 1, "\(output)")
        return try #require(keys.first)
    }

    /// The app's key as GetKey gives it once the container is unlocked with `passcode`.
    func appKey(_ daemon: DaemonProcess, passcode: String) async throws -> Data {
        let client = try await daemon.client()
        try await client.unlock(passcode: passcode)
        let app = try await CordonApp.connect(appId: "com.example.notes", socketPath: daemon.socketPath)
        let key = try await app.key().withUnsafeBytes { Data($0) }
        await app.close()
        try await client.lock()
        await client.close()
        return key
    }

    @Test func theRecoveryKeyRestoresTheSameKeysOnAnotherTPMAndIsReplaced() async throws {
        let first = try SoftwareTPM()
        defer { first.stop() }
        let second = try SoftwareTPM()
        defer { second.stop() }
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let original = try await daemon(first, root: root)
        let initialized = try await runCommand(
            Binaries.cordon, ["init", "--socket", original.socketPath, "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(initialized.stdout.contains("Keep it offline"), "\(initialized.stdout)")
        let recovery = try recoveryKey(in: initialized.stdout)
        let before = try await appKey(original, passcode: Self.passcode)
        var logs = original.log
        try await original.stop()

        // The same database, another machine's TPM: the passcode is refused, with the way out named.
        let moved = try await daemon(second, root: root)
        defer { moved.cleanUp() }
        let client = try await moved.client()
        do {
            try await client.unlock(passcode: Self.passcode)
            Issue.record("the moved database unlocked")
        } catch CordonError.hardwareKeyRejected(let reason) {
            #expect(reason.contains("cordon init --recovery"), "\(reason)")
        }
        let status = try await runCommand(Binaries.cordon, ["status", "--socket", moved.socketPath])
        #expect(status.stdout.contains("restore with the recovery key, `cordon init --recovery`"), "\(status.stdout)")
        let doctor = try await runCommand(Binaries.cordon, ["doctor", "--socket", moved.socketPath])
        #expect(doctor.stdout.contains("cordon init --recovery"), "\(doctor.stdout)")

        // A wrong key (well formed: every group passes its check) is refused and counted.
        let wrong = String(repeating: "000000-", count: 7) + "000000"
        let failedBefore = try await client.status().failedAttempts
        do {
            _ = try await client.recover(recoveryKey: wrong, passcode: "8642")
            Issue.record("a wrong recovery key was accepted")
        } catch CordonError.invalidRecoveryKey(let reason) {
            #expect(reason.contains("does not open"), "\(reason)")
        }
        #expect(try await client.status().failedAttempts == failedBefore + 1)
        // A mistyped digit is caught by its group's check, before any key is derived, and not counted.
        var typo = Array(recovery)
        typo[2] = typo[2] == "1" ? "2" : "1"
        do {
            _ = try await client.recover(recoveryKey: String(typo), passcode: "8642")
            Issue.record("a mistyped recovery key was accepted")
        } catch CordonError.invalidRecoveryKey(let reason) {
            #expect(reason == "group 1 is not a multiple of 11: a digit in it is mistyped", "\(reason)")
        }
        #expect(try await client.status().failedAttempts == failedBefore + 1)
        await client.close()

        // The CLI reads the key from stdin (never argv), sets a new passcode and prints a new key.
        let restored = try await runCommand(
            Binaries.cordon,
            ["init", "--recovery", "--recovery-stdin", "--passcode-stdin", "--socket", moved.socketPath],
            input: recovery + "\n8642\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("NEW recovery key"), "\(restored.stdout)")
        let next = try recoveryKey(in: restored.stdout)
        #expect(next != recovery)
        let record = try #require(try CordonDatabase(path: moved.databasePath, readOnly: true).loadWrappedKey())
        #expect(record.protection == .tpm)
        #expect(try await appKey(moved, passcode: "8642") == before)

        // The old key no longer works; the new one does.
        let again = try await moved.client()
        do {
            _ = try await again.recover(recoveryKey: recovery, passcode: "1357")
            Issue.record("the replaced recovery key still works")
        } catch CordonError.invalidRecoveryKey {}
        // A passcode change keeps the recovery key valid.
        try await again.changePasscode(old: "8642", new: "9753")
        _ = try await again.recover(recoveryKey: next, passcode: "1357")
        await again.close()
        #expect(try await appKey(moved, passcode: "1357") == before)

        // Never in the daemon's log, the audit log or the database.
        logs += moved.log
        let audit = try await runCommand(Binaries.cordon, ["audit", "--socket", moved.socketPath, "--json"])
        var stored = Data()
        for suffix in ["", "-wal"] {
            stored += (try? Data(contentsOf: URL(fileURLWithPath: moved.databasePath + suffix))) ?? Data()
        }
        for key in [recovery, next] {
            let digits = key.replacingOccurrences(of: "-", with: "")
            for text in [logs, audit.stdout, audit.stderr, String(decoding: stored, as: UTF8.self)] {
                #expect(!text.contains(key) && !text.contains(digits))
            }
        }
    }
}
