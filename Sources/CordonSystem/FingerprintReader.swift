import CCordonBus
import Foundation

/// fprintd (`net.reactivated.Fprint`) on the system bus: is a finger enrolled, and does the next
/// scan match (docs/ARCHITECTURE.md, "Keys"). Blocking: each call opens its own connection, so it
/// runs on a thread of its own, never on the agent's loop.
///
/// Only the system's fprintd is asked: the name's owner must be a connection of root (the bus
/// says whose, `GetConnectionUnixUser`), and every call goes to that owner's unique name, so a
/// name that changes hands meanwhile answers for no one.
public struct FingerprintReader: Sendable {
    /// The system bus address; empty: the system's own (`unix:path=/run/dbus/system_bus_socket`,
    /// whatever `DBUS_SYSTEM_BUS_ADDRESS` says).
    public let address: String

    public init(address: String) {
        self.address = address
    }

    /// What a verification ended with.
    public enum Outcome: Sendable, Equatable {
        case match
        case noMatch
    }

    /// Why a verification could not run.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// No bus, no fprintd, no reader, or the reader failed.
        case unavailable(String)
        /// The user has no finger enrolled on the reader.
        case noFingerEnrolled
        /// `net.reactivated.Fprint` is owned by a connection of `uid`, not root: not the system's
        /// fprintd, so not asked.
        case notTheSystemsFprintd(uid: UInt32)

        public var description: String {
            switch self {
            case .unavailable(let reason): return reason
            case .noFingerEnrolled: return "no finger is enrolled for this user (fprintd-enroll)"
            case .notTheSystemsFprintd(let uid):
                return "net.reactivated.Fprint is owned by uid \(uid), not root: not the system's fprintd"
            }
        }
    }

    /// The reader's object path, when the user has a finger enrolled on it.
    public func enrolledDevice() throws(Failure) -> String {
        let (bus, owner) = try open()
        defer { sd_bus_flush_close_unref(bus) }
        var device = [CChar](repeating: 0, count: 512)
        var errorName = [CChar](repeating: 0, count: 256)
        var enrolled: Int32 = 0
        let result = cordon_fprint_probe(bus, owner, &device, device.count, &enrolled, &errorName, errorName.count)
        guard result >= 0 else {
            throw .unavailable("fprintd: " + Self.describe(result, errorName))
        }
        guard enrolled > 0 else { throw .noFingerEnrolled }
        return String(decoding: device.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Claims `device`, waits up to `timeoutSeconds` for one scan and releases it. Returns the
    /// outcome and how many `VerifyStatus` signals came from a sender that does not own
    /// `net.reactivated.Fprint` (ignored).
    public func verify(device: String, timeoutSeconds: Double) throws(Failure) -> (Outcome, ignored: Int) {
        let (bus, owner) = try open()
        defer { sd_bus_flush_close_unref(bus) }
        var status = [CChar](repeating: 0, count: 128)
        var errorName = [CChar](repeating: 0, count: 256)
        var ignored: Int32 = 0
        let result = cordon_fprint_verify(
            bus, owner, device, UInt64(timeoutSeconds * 1e6), &status, status.count, &ignored, &errorName,
            errorName.count)
        let text = String(decoding: status.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch result {
        case 1: return (.match, Int(ignored))
        case 0 where text == "verify-no-match": return (.noMatch, Int(ignored))
        case 0:
            throw .unavailable("the reader answered \(text.isEmpty ? "nothing" : text)")
        case -ETIMEDOUT: throw .unavailable("no finger was scanned in \(Int(timeoutSeconds)) s")
        default: throw .unavailable("fprintd: " + Self.describe(result, errorName))
        }
    }

    /// Connects to the bus and finds fprintd: the unique name owning `net.reactivated.Fprint`,
    /// checked to be a connection of root.
    private func open() throws(Failure) -> (OpaquePointer, owner: String) {
        var bus: OpaquePointer?
        let result = cordon_bus_open(address, 0, &bus)
        guard result >= 0, let bus else {
            throw .unavailable("the system bus: " + String(cString: strerror(-result)))
        }
        var owner = [CChar](repeating: 0, count: 256)
        var errorName = [CChar](repeating: 0, count: 256)
        var uid: UInt32 = 0
        let found = cordon_bus_name_owner(
            bus, "net.reactivated.Fprint", &owner, owner.count, &uid, &errorName, errorName.count)
        guard found >= 0, uid == 0 else {
            sd_bus_flush_close_unref(bus)
            switch found {
            case -ENXIO: throw .unavailable("fprintd is not running (no owner of net.reactivated.Fprint)")
            case 0...: throw .notTheSystemsFprintd(uid: uid)
            default: throw .unavailable("fprintd: " + Self.describe(found, errorName))
            }
        }
        return (bus, String(decoding: owner.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    private static func describe(_ result: Int32, _ errorName: [CChar]) -> String {
        let name = String(decoding: errorName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? String(cString: strerror(-result)) : name
    }
}
