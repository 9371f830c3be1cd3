import Foundation
import Testing

@testable import CordonFleet

/// Which commands fleetd hands on: its own, in time, once, from the command role, and a wipe of
/// several machines only with the root's threshold of command keys.
@Suite struct FleetCommandCheckTests {
    static let me = String(repeating: "a", count: 64)
    static let other = String(repeating: "b", count: 64)
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func command(
        _ counter: Int, _ kind: FleetCommand.Kind = .lock, machines: Int = 1, expires: Double = 3_600
    )
        -> FleetCommand
    {
        FleetCommand(
            counter: counter, kind: kind, app: kind == .wipeApp ? "com.example.notes" : nil,
            issued: now.addingTimeInterval(-60), expires: now.addingTimeInterval(expires), machines: machines)
    }

    func verdicts(
        _ commands: [FleetCommand], device: String = me, role: String = "commands", signers: Int = 1,
        taken: [Int: [UInt8]] = [:]
    ) -> [FleetCommandCheck.Verdict] {
        FleetCommandCheck(device: Self.me).verdicts(
            FleetCommandFile(device: device, commands: commands), listedBy: role, signers: signers, wipeThreshold: 2,
            taken: taken, now: Self.now)
    }

    @Test func newCommandsAreAcceptedInCounterOrder() {
        let result = verdicts([Self.command(2, .wipe), Self.command(1)])
        #expect(result == [.accept(Self.command(1)), .accept(Self.command(2, .wipe))])
    }

    @Test func aCommandTakenBeforeIsHistoryAndADifferentOneUnderItsCounterIsReplayed() {
        let taken = [1: Self.command(1).digest]
        #expect(verdicts([Self.command(1)], taken: taken).isEmpty)
        #expect(verdicts([Self.command(1, .wipe)], taken: taken) == [.refuse(Self.command(1, .wipe), .replayed)])
        // Below the highest counter taken, never seen: an old command brought back.
        let later = [5: Self.command(5).digest]
        #expect(verdicts([Self.command(3)], taken: later) == [.refuse(Self.command(3), .replayed)])
    }

    @Test func expiredOtherDeviceAndFutureCommandsAreRefused() {
        #expect(verdicts([Self.command(1, expires: -1)]) == [.refuse(Self.command(1, expires: -1), .expired)])
        #expect(verdicts([Self.command(1)], device: Self.other) == [.refuse(Self.command(1), .otherDevice)])
        var future = Self.command(1)
        future.issued = Self.now.addingTimeInterval(3_600)
        #expect(verdicts([future]) == [.refuse(future, .issuedInFuture)])
    }

    /// Another machine's genuine file is judged as another machine's whatever its counters, and its
    /// counters are not spent here: the account that sends one on this machine's subject cannot
    /// make this machine's own next commands look like replays.
    @Test func anotherMachinesCountersAreNeitherJudgedNorSpentHere() {
        let taken = [2: Self.command(2).digest]
        let theirs = verdicts([Self.command(1)], device: Self.other, taken: taken)
        #expect(theirs == [.refuse(Self.command(1), .otherDevice)])
        #expect(verdicts([Self.command(9)], role: "targets") == [.refuse(Self.command(9), .notCommandRole)])
        let spent = FleetCommandCheck.Refusal.allCases.filter(\.spendsCounter)
        #expect(Set(spent) == [.replayed, .expired, .wipeThreshold, .issuedInFuture])
    }

    @Test func onlyTheCommandRoleIssuesCommands() {
        #expect(verdicts([Self.command(1)], role: "targets") == [.refuse(Self.command(1), .notCommandRole)])
    }

    @Test func aWipeOfSeveralMachinesNeedsTheWipeThreshold() {
        let wipe = Self.command(1, .wipe, machines: 2)
        #expect(verdicts([wipe], signers: 1) == [.refuse(wipe, .wipeThreshold)])
        #expect(verdicts([wipe], signers: 2) == [.accept(wipe)])
        let lock = Self.command(1, .lock, machines: 2)
        #expect(verdicts([lock], signers: 1) == [.accept(lock)], "a lock of many machines destroys nothing")
        let one = Self.command(1, .wipeApp)
        #expect(verdicts([one], signers: 1) == [.accept(one)], "a wipe of one machine needs one key")
    }

    @Test func aCommandFileReadsBackAndRefusesBadFields() throws {
        let file = FleetCommandFile(device: Self.me, commands: [Self.command(2, .wipeApp), Self.command(1)])
        #expect(try FleetCommandFile(file.bytes) == file)
        let noApp =
            #"{"_type":"cordon-commands","device":"d","commands":[{"counter":1,"kind":"wipeApp","issued":"2030-01-01T00:00:00Z","expires":"2030-01-01T00:00:00Z","machines":1}]}"#
        #expect(throws: TUFError(.malformed, role: "target", "/commands/0/app is missing or not the app to wipe")) {
            try FleetCommandFile(Array(noApp.utf8))
        }
        let badKind =
            #"{"_type":"cordon-commands","device":"d","commands":[{"counter":1,"kind":"erase","issued":"2030-01-01T00:00:00Z","expires":"2030-01-01T00:00:00Z","machines":1}]}"#
        #expect(throws: TUFError.self) { try FleetCommandFile(Array(badKind.utf8)) }
        let noMachines =
            #"{"_type":"cordon-commands","device":"d","commands":[{"counter":1,"kind":"lock","issued":"2030-01-01T00:00:00Z","expires":"2030-01-01T00:00:00Z","machines":0}]}"#
        #expect(
            throws: TUFError(
                .malformed, role: "target", "/commands/0/machines is 0, not a number of machines (1 or more)")
        ) {
            try FleetCommandFile(Array(noMachines.utf8))
        }
    }

    /// Canonical JSON writes a control character raw and the strict reader refuses a raw one, so a
    /// file holding one (escaped, as a forger or a careless writer would) is refused where it is
    /// read, naming the member: every file that parses writes back and parses again.
    @Test func aControlCharacterInACommandsTextIsRefusedWhereItIsRead() throws {
        let reason =
            #"{"_type":"cordon-commands","device":"d","commands":[{"counter":1,"kind":"lock","reason":"lost\nlaptop","issued":"2030-01-01T00:00:00Z","expires":"2030-01-01T00:00:00Z","machines":1}]}"#
        let app =
            #"{"_type":"cordon-commands","device":"d","commands":[{"counter":1,"kind":"wipeApp","app":"com.ex\u0001","issued":"2030-01-01T00:00:00Z","expires":"2030-01-01T00:00:00Z","machines":1}]}"#
        let device = #"{"_type":"cordon-commands","device":"d\t","commands":[]}"#
        for (text, member, code) in [
            (reason, "/commands/0/reason", "A"), (app, "/commands/0/app", "1"), (device, "/device", "9"),
        ] {
            #expect(
                throws: TUFError(
                    .malformed, role: "target",
                    "\(member) holds a control character (U+\(code)); it must be one line of text")
            ) {
                try FleetCommandFile(Array(text.utf8))
            }
        }
    }

    /// A command names how many machines it went to, not which: issuing to n machines makes n files
    /// of constant size, not n files of n ids.
    @Test func aCommandFileDoesNotGrowWithTheNumberOfMachines() {
        let one = FleetCommandFile(device: Self.me, commands: [Self.command(1, .lock, machines: 1)])
        let many = FleetCommandFile(device: Self.me, commands: [Self.command(1, .lock, machines: 10_000)])
        #expect(many.bytes.count - one.bytes.count == "10000".count - "1".count)
    }

    @Test func theHandoffAndStatusReadBack() throws {
        let bytes = FleetHandoff.commandBytes(Self.command(7, .wipe), device: Self.me, verifiedAt: Self.now)
        let read = try FleetHandoff.command(bytes)
        #expect(read.command == Self.command(7, .wipe) && read.device == Self.me)
        #expect(FleetHandoff.commandFileName(7) == "000000000007.json")
        let status = FleetHandoff.Status(
            device: Self.me, repository: "https://r/", verifiedAt: Self.now,
            freshUntil: Self.now.addingTimeInterval(60),
            staleAfter: Self.now.addingTimeInterval(360), versions: ["root": 1, "timestamp": 9], lastError: nil)
        #expect(try FleetHandoff.Status(status.bytes) == status)
        // A server's multi-line error is kept on one line: the status still reads back.
        let failed = FleetHandoff.Status(
            device: Self.me, repository: "https://r/", verifiedAt: nil, freshUntil: nil, staleAfter: nil,
            versions: [:], lastError: "503\nService Unavailable\t(retry)")
        #expect(failed.lastError == "503 Service Unavailable (retry)")
        #expect(try FleetHandoff.Status(failed.bytes) == failed)
        #expect(
            !status.isStale(at: Self.now.addingTimeInterval(359))
                && status.isStale(at: Self.now.addingTimeInterval(360)))
    }
}
