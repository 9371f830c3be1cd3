import CordonFleet
import CordonFleetd
import CordonLocking
import CordonNATS
import CordonNATSLoop
import Crypto
import Foundation
import Logging

/// One simulated machine of the fleet swarm: its own device key and NATS identity, the real push
/// client (`FleetPush`: connect, its subjects, the catch-up read at every (re)connection) and the
/// real judgement of what comes (`FleetPushedCommands.verify`, `FleetCommandCheck`, a ledger of
/// what was taken), then a signed `FleetReport` on its report subject as its acknowledgement.
/// Executing a command is counting it: the swarm checks none is executed twice.
final class SwarmMachine: Sendable {
    let index: Int
    let key: Curve25519.Signing.PrivateKey
    let publicKey: [UInt8]
    let id: String

    struct State {
        var push: FleetPush?
        /// Commands taken, by counter: the digest (the same ledger fleetd keeps).
        var taken: [Int: [UInt8]] = [:]
        /// Executions by counter: exactly one each is the target.
        var executed: [Int: Int] = [:]
        var refused = 0
        /// A command was taken before `connect` stored the push client (the catch-up read can be
        /// that quick): its report goes as soon as the client is stored.
        var reportOwed = false
    }

    let state = Locked(State())

    init(index: Int) {
        self.index = index
        key = Curve25519.Signing.PrivateKey()
        publicKey = Array(key.publicKey.rawRepresentation)
        id = FleetDeviceKey.id(of: publicKey)
    }

    var nkey: String { NATSNKey.user(publicKey: publicKey) }

    func sign(_ message: [UInt8]) -> [UInt8] { (try? key.signature(for: message)).map(Array.init) ?? [] }

    /// Connects on `loop`; `work` runs what arrives off the library's threads.
    func connect(
        _ configuration: FleetdConfiguration.Push, loop: NATSEpollLoop, trusted: TUFTrustedSet, work: SwarmWorkers,
        logger: Logger, onEvent: @escaping @Sendable (NATSEvent) -> Void
    ) throws {
        let push = try FleetPush(
            configuration, publicKey: publicKey,
            sign: { [key] message in
                (try? key.signature(for: message)).map(Array.init) ?? []
            }, eventLoop: loop, logger: logger, onRing: { _ in },
            onCommands: { [self] bytes in work.run { self.take(bytes, trusted: trusted, logger: logger) } },
            onEvent: onEvent, runBlocking: { work.run($0) })
        let (owed, last) = state.withLock { value -> (Bool, Int?) in
            value.push = push
            defer { value.reportOwed = false }
            return (value.reportOwed, value.taken.keys.max())
        }
        if owed { _ = push.publishReport(report(trusted: trusted, lastCommand: last, time: Date()), logger: logger) }
    }

    /// Closes the connection (the machine goes offline).
    func disconnect() {
        let push = state.withLock { value -> FleetPush? in
            defer { value.push = nil }
            return value.push
        }
        push?.close()
    }

    /// Judges a pushed command file as fleetd does, executes (counts) what is accepted, and
    /// acknowledges with a signed report naming the highest counter taken.
    func take(_ bytes: [UInt8], trusted: TUFTrustedSet, logger: Logger) {
        let now = Date()
        guard let verified = try? FleetPushedCommands.verify(bytes, trusted: trusted, device: id, now: now) else {
            state.withLock { $0.refused += 1 }
            return
        }
        let (push, accepted, last) = state.withLock { value -> (FleetPush?, Int, Int?) in
            let verdicts = FleetCommandCheck(device: id).verdicts(
                verified.file, listedBy: verified.role, signers: verified.signers,
                wipeThreshold: trusted.root.wipeThreshold, taken: value.taken, now: now)
            var accepted = 0
            for verdict in verdicts {
                if case .accept(let command) = verdict {
                    value.executed[command.counter, default: 0] += 1
                    accepted += 1
                } else {
                    value.refused += 1
                }
                value.taken[verdict.command.counter] = verdict.command.digest
            }
            if accepted > 0, value.push == nil { value.reportOwed = true }
            return (value.push, accepted, value.taken.keys.max())
        }
        guard accepted > 0 else { return }
        _ = push?.publishReport(report(trusted: trusted, lastCommand: last, time: now), logger: logger)
    }

    /// The signed report at `time`.
    func report(trusted: TUFTrustedSet, lastCommand: Int?, time: Date) -> [UInt8] {
        let report = FleetReport(
            device: id, publicKey: publicKey, time: time, versions: trusted.versions, policies: [:],
            lastCommand: lastCommand, lastError: nil)
        return report.file(signature: sign(report.message))
    }

    /// Publishes a periodic report (the posture rate of the report phase).
    func publishPeriodic(trusted: TUFTrustedSet, time: Date, logger: Logger) {
        let (push, last) = state.withLock { ($0.push, $0.taken.keys.max()) }
        _ = push?.publishReport(report(trusted: trusted, lastCommand: last, time: time), logger: logger)
    }

    var executions: [Int: Int] { state.withLock { $0.executed } }
}
