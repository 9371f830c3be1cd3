import Foundation

/// The push channel's doorbell (docs/ARCHITECTURE.md, "Fleet push"): the admins' newly signed
/// `timestamp.json`, published to every machine. It carries no trust by itself: a machine checks it
/// is signed by the root's timestamp keys, unexpired and newer than the one it trusts, then polls the
/// repository after a random delay, and no more often than `minimumSpacing`, so that neither a
/// fleet answering one ring nor a flood of forged or replayed rings stampedes the repository.
public struct FleetDoorbell: Sendable {
    /// What a ring leads to.
    public enum Decision: Sendable, Equatable {
        /// Poll at this time (the random delay, or the spacing after the last doorbell poll).
        case poll(at: Date)
        /// A poll is already scheduled for this time: the ring joins it.
        case alreadyScheduled(at: Date)
        /// Genuine, but not newer than the timestamp already trusted (a replay, or already polled).
        case notNewer(version: Int)
        /// Not a timestamp the root's keys signed, or expired: nothing is fetched.
        case refused(TUFError)
    }

    /// The subject every machine listens on.
    public static let subject = "cordon.fleet.doorbell"
    /// Polls follow a ring after a uniform random delay in `0..<maximumDelay` seconds.
    public var maximumDelay: Double = 10
    /// Doorbell polls are at least this many seconds apart, however often it rings.
    public var minimumSpacing: Double = 10
    /// The poll scheduled by a ring and not yet made.
    public private(set) var scheduled: Date?
    /// When the last doorbell poll was due.
    public private(set) var lastPoll: Date?
    /// The newest timestamp version a ring announced (a second ring of it schedules nothing more).
    public private(set) var announced = 0

    public init() {}

    /// Judges a ring of `bytes` against what the machine trusts, at `now`; `unit` is a uniform
    /// random number in 0..<1 for the delay.
    public mutating func ring(_ bytes: [UInt8], trusted: TUFTrustedSet, now: Date, unit: Double) -> Decision {
        let timestamp: TUFTimestamp
        do {
            timestamp = try Self.verify(bytes, trusted: trusted, now: now)
        } catch {
            return .refused(error)
        }
        let known = max(trusted.timestamp?.version ?? 0, announced)
        guard timestamp.version > known else { return .notNewer(version: timestamp.version) }
        announced = timestamp.version
        if let scheduled { return .alreadyScheduled(at: scheduled) }
        var at = now.addingTimeInterval(maximumDelay * min(max(unit, 0), 1))
        if let lastPoll { at = max(at, lastPoll.addingTimeInterval(minimumSpacing)) }
        scheduled = at
        return .poll(at: at)
    }

    /// The scheduled poll was made (or overtaken by another poll): the next ring schedules anew.
    public mutating func polled() {
        if let scheduled { lastPoll = scheduled }
        scheduled = nil
    }

    /// A timestamp the root's keys signed, within its size, unexpired at `now`.
    static func verify(_ bytes: [UInt8], trusted: TUFTrustedSet, now: Date) throws(TUFError) -> TUFTimestamp {
        guard bytes.count <= TUFRefresh.Limits.timestamp else {
            throw TUFError(
                .length, role: "timestamp", "a doorbell of \(bytes.count) bytes (over \(TUFRefresh.Limits.timestamp))")
        }
        let timestamp = try TUFTimestamp(bytes)
        _ = try trusted.root.verify("timestamp", timestamp.envelope)
        guard !timestamp.envelope.isExpired(at: now) else {
            throw TUFError(
                .expired, role: "timestamp",
                "timestamp v\(timestamp.version) expired \(TUFDate.format(timestamp.envelope.expires))")
        }
        return timestamp
    }
}
