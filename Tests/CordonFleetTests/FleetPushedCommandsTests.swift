import CordonProtocol
import Foundation
import Testing

@testable import CordonFleet

/// A machine's pushed command file (docs/ARCHITECTURE.md, "Fleet push") is taken only when the keys
/// the trusted targets delegate its path to signed it, by their threshold, and it has not expired;
/// the commands then meet `FleetCommandCheck` as listed ones. The NATS account itself is not
/// trusted: what it can publish on a machine's subject (its own signature, another machine's file,
/// an old file, anything over the limit) is refused or judged as history.
@Suite struct FleetPushedCommandsTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)
    static let device = String(repeating: "a", count: 64)
    static let other = String(repeating: "b", count: 64)

    /// Trusted metadata whose top targets delegate `commands/*` to `commands`, two keys, threshold 1.
    struct Repository {
        let rootKey = TUFSigningKey()
        let commandKeys = [TUFSigningKey(), TUFSigningKey()]
        let trusted: TUFTrustedSet

        init(threshold: Int = 1) throws {
            let roles = ["root": rootKey, "timestamp": rootKey, "snapshot": rootKey, "targets": rootKey]
            let root = TUFWriter.root(
                version: 1, expires: FleetPushedCommandsTests.now + 86_400 * 365, keys: [rootKey.publicKey],
                roles: roles.mapValues { TUFRoleKeys(keyIDs: [$0.publicKey.id], threshold: 1) }, wipeThreshold: 2)
            var trusted = try TUFTrustedSet(root: try TUFWriter.sign(root, with: [rootKey]))
            let targets = TUFWriter.targets(
                version: 1, expires: FleetPushedCommandsTests.now + 86_400, files: [:],
                delegations: [
                    .init(
                        name: "commands", keys: commandKeys.map(\.publicKey), threshold: threshold,
                        paths: ["commands/*"])
                ])
            trusted.targets["targets"] = try TUFTargets(try TUFWriter.sign(targets, with: [rootKey]), role: "targets")
            self.trusted = trusted
        }
    }

    static func command(_ counter: Int, kind: FleetCommand.Kind = .lock) -> FleetCommand {
        FleetCommand(
            counter: counter, kind: kind, app: nil, issued: now - 60, expires: now + 3600)
    }

    /// The kind of refusal `verify` throws, nil when it takes the file.
    static func refusal(_ bytes: [UInt8], trusted: TUFTrustedSet, device: String, now: Date) -> TUFError.Kind? {
        do {
            _ = try FleetPushedCommands.verify(bytes, trusted: trusted, device: device, now: now)
            return nil
        } catch { return error.kind }
    }

    static func file(_ commands: [FleetCommand], device: String = device) -> FleetCommandFile {
        FleetCommandFile(device: device, commands: commands)
    }

    @Test func aFileSignedByTheDelegatedKeysIsTaken() throws {
        let repository = try Repository()
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: [repository.commandKeys[1]])
        let verified = try FleetPushedCommands.verify(
            bytes, trusted: repository.trusted, device: Self.device, now: Self.now)
        #expect(verified.role == "commands")
        #expect(verified.signers == 1)
        #expect(verified.file == Self.file([Self.command(1)]))
    }

    @Test func aFileTheAccountSignedItselfIsRefused() throws {
        let repository = try Repository()
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1, kind: .wipe)]), with: [TUFSigningKey()])
        #expect(Self.refusal(bytes, trusted: repository.trusted, device: Self.device, now: Self.now) == .threshold)
    }

    @Test func aFileBelowTheThresholdIsRefused() throws {
        let repository = try Repository(threshold: 2)
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: [repository.commandKeys[0]])
        #expect(Self.refusal(bytes, trusted: repository.trusted, device: Self.device, now: Self.now) == .threshold)
        let both = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: repository.commandKeys)
        #expect(
            try FleetPushedCommands.verify(both, trusted: repository.trusted, device: Self.device, now: Self.now)
                .signers == 2)
    }

    @Test func aChangedCommandBreaksTheSignature() throws {
        let repository = try Repository()
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: [repository.commandKeys[0]])
        let text = String(decoding: bytes, as: UTF8.self)
        let changed = Array(text.replacingOccurrences(of: "\"lock\"", with: "\"wipe\"").utf8)
        #expect(changed != bytes)
        #expect(Self.refusal(changed, trusted: repository.trusted, device: Self.device, now: Self.now) == .threshold)
    }

    @Test func anotherMachinesGenuineFileOnThisSubjectIsRefusedCommandByCommand() throws {
        let repository = try Repository()
        let theirs = Self.file([Self.command(1, kind: .wipe)], device: Self.other)
        let bytes = try FleetPushedCommands.sign(theirs, with: [repository.commandKeys[0]])
        let verified = try FleetPushedCommands.verify(
            bytes, trusted: repository.trusted, device: Self.device, now: Self.now)
        let verdicts = FleetCommandCheck(device: Self.device).verdicts(
            verified.file, listedBy: verified.role, signers: verified.signers, wipeThreshold: 2, taken: [:],
            now: Self.now)
        #expect(verdicts == [.refuse(Self.command(1, kind: .wipe), .otherDevice)])
    }

    @Test func anOldFileIsHistoryAndAnOlderCounterIsAReplay() throws {
        let repository = try Repository()
        let first = Self.command(1)
        let bytes = try FleetPushedCommands.sign(Self.file([first]), with: [repository.commandKeys[0]])
        let verified = try FleetPushedCommands.verify(
            bytes, trusted: repository.trusted, device: Self.device, now: Self.now)
        let check = FleetCommandCheck(device: Self.device)
        // The stream hands the same file again at every reconnect: taken before, so no verdict.
        let again = check.verdicts(
            verified.file, listedBy: verified.role, signers: 1, wipeThreshold: 2, taken: [1: first.digest, 2: [0]],
            now: Self.now)
        #expect(again.isEmpty)
        // A different command under a counter at or below the highest taken is a replay.
        let other = FleetCommand(
            counter: 1, kind: .refresh, app: nil, issued: Self.now - 60, expires: Self.now + 3600)
        let replayed = check.verdicts(
            Self.file([other]), listedBy: "commands", signers: 1, wipeThreshold: 2, taken: [2: [0]], now: Self.now)
        #expect(replayed == [.refuse(other, .replayed)])
    }

    @Test func anExpiredOrOversizedFileIsRefused() throws {
        let repository = try Repository()
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: [repository.commandKeys[0]])
        #expect(Self.refusal(bytes, trusted: repository.trusted, device: Self.device, now: Self.now + 7200) == .expired)
        let oversized = [UInt8](repeating: 0x20, count: FleetPushedCommands.maximumLength + 1)
        #expect(Self.refusal(oversized, trusted: repository.trusted, device: Self.device, now: Self.now) == .length)
    }

    @Test func nothingIsTakenBeforeTheTargetsAreTrusted() throws {
        let repository = try Repository()
        var untrusted = repository.trusted
        untrusted.targets = [:]
        let bytes = try FleetPushedCommands.sign(Self.file([Self.command(1)]), with: [repository.commandKeys[0]])
        #expect(Self.refusal(bytes, trusted: untrusted, device: Self.device, now: Self.now) == .notFound)
    }
}
