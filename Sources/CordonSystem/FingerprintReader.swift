import CCordonBus
import Foundation

/// fprintd (`net.reactivated.Fprint`) on the system bus: is a finger enrolled, and does the next
/// scan match (docs/ARCHITECTURE.md, "Keys"). Blocking: each call opens its own connection, so it
/// runs on a thread of its own, never on the agent's loop.
public struct FingerprintReader: Sendable {
    /// The system bus address; empty: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
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

        public var description: String {
            switch self {
            case .unavailable(let reason): return reason
            case .noFingerEnrolled: return "no finger is enrolled for this user (fprintd-enroll)"
            }
        }
    }

    /// The reader's object path, when the user has a finger enrolled on it.
    public func enrolledDevice() throws(Failure) -> String {
        let bus = try open()
        defer { sd_bus_flush_close_unref(bus) }
        var device = [CChar](repeating: 0, count: 512)
        var errorName = [CChar](repeating: 0, count: 256)
        var enrolled: Int32 = 0
        let result = cordon_fprint_probe(bus, &device, device.count, &enrolled, &errorName, errorName.count)
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
        let bus = try open()
        defer { sd_bus_flush_close_unref(bus) }
        var status = [CChar](repeating: 0, count: 128)
        var errorName = [CChar](repeating: 0, count: 256)
        var ignored: Int32 = 0
        let result = cordon_fprint_verify(
            bus, device, UInt64(timeoutSeconds * 1e6), &status, status.count, &ignored, &errorName, errorName.count)
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

    private func open() throws(Failure) -> OpaquePointer {
        var bus: OpaquePointer?
        let result = cordon_bus_open(address, 0, &bus)
        guard result >= 0, let bus else {
            throw .unavailable("the system bus: " + String(cString: strerror(-result)))
        }
        return bus
    }

    private static func describe(_ result: Int32, _ errorName: [CChar]) -> String {
        let name = String(decoding: errorName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? String(cString: strerror(-result)) : name
    }
}
