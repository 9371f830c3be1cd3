import CCordonBus
import Foundation

/// Desktop notifications (`org.freedesktop.Notifications` on the session bus): how the agent shows
/// a device sign-in code when no terminal asked for it (docs/ARCHITECTURE.md, "Identity").
/// Blocking: each call opens its own connection, so it runs on a thread of its own, never on the
/// agent's loop.
public struct DesktopNotifier: Sendable {
    /// The session bus address; empty: `DBUS_SESSION_BUS_ADDRESS` or the user's bus.
    public let address: String

    public init(address: String) {
        self.address = address
    }

    /// Why a notification could not be shown: no session bus, or no notification server on it.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Shows `summary` and `body` for `expireMilliseconds` (nil: the server's default); returns
    /// the notification's id, for `close`.
    public func show(summary: String, body: String, expireMilliseconds: Int32?) throws(Failure) -> UInt32 {
        let bus = try open()
        defer { sd_bus_flush_close_unref(bus) }
        var id: UInt32 = 0
        var errorName = [CChar](repeating: 0, count: 256)
        let result = cordon_notify_show(
            bus, "Cordon", summary, body, expireMilliseconds ?? -1, &id, &errorName, errorName.count)
        guard result >= 0 else {
            let name = String(decoding: errorName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Failure(
                description: "org.freedesktop.Notifications: "
                    + (name.isEmpty ? String(cString: strerror(-result)) : name))
        }
        return id
    }

    /// Withdraws the notification `id` (the sign-in it showed a code for has ended).
    public func close(_ id: UInt32) throws(Failure) {
        let bus = try open()
        defer { sd_bus_flush_close_unref(bus) }
        let result = cordon_notify_close(bus, id)
        guard result >= 0 else {
            throw Failure(description: "org.freedesktop.Notifications: " + String(cString: strerror(-result)))
        }
    }

    private func open() throws(Failure) -> OpaquePointer {
        var bus: OpaquePointer?
        let result = cordon_bus_open(address, 1, &bus)
        guard result >= 0, let bus else {
            throw Failure(description: "the session bus: " + String(cString: strerror(-result)))
        }
        _ = cordon_bus_set_call_timeout_ms(bus, 5_000)
        return bus
    }
}
