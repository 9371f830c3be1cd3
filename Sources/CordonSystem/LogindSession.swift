import CCordonBus
import Foundation

/// What logind says of the user's session: where a passcode prompt can be shown.
///
/// Read over the system bus (org.freedesktop.login1 Session properties `Type`, `Display` and
/// `TTY`). logind does not hold the session's environment, so a Wayland socket or an X
/// authority file must come from elsewhere (the agent's own environment).
public struct LogindSession: Sendable, Equatable {
    /// The session's object path, e.g. `/org/freedesktop/login1/session/c1`.
    public var path: String
    /// `x11`, `wayland`, `tty`, `mir` or `unspecified`.
    public var type: String
    /// The X11 display, e.g. `:0`; empty when the session has none.
    public var display: String
    /// The terminal, e.g. `tty2` or `pts/3`; empty when the session has none.
    public var tty: String

    /// A session with these properties (tests and the lookup).
    public init(path: String, type: String, display: String, tty: String) {
        self.path = path
        self.type = type
        self.display = display
        self.tty = tty
    }

    /// Why no session could be read.
    public struct LookupError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What failed, e.g. "cannot connect to the system bus: No such file or directory".
        public let description: String
    }

    /// The longest one logind call may take: a hung bus must not hold a prompt for long.
    public static let callTimeoutMilliseconds: UInt32 = 2000

    /// Looks up the session on the system bus at `address` (nil: the system's own bus), asking
    /// `org.freedesktop.login1` only when a connection of root owns it:
    /// `sessionID` when given, else the session of this process, else the user's display session
    /// (logind's `User.Display` for `uid`). Blocking: call it off the agent's loop.
    public static func lookUp(systemBus address: String?, sessionID: String?, uid: UInt32) throws(LookupError)
        -> LogindSession
    {
        var bus: OpaquePointer?
        let opened = cordon_bus_open(address, 0, &bus)
        guard opened >= 0, let bus else { throw LookupError("cannot connect to the system bus", opened) }
        defer { sd_bus_flush_close_unref(bus) }
        _ = cordon_bus_set_call_timeout_ms(bus, callTimeoutMilliseconds)
        // Only the system's logind says where a prompt for the passcode goes.
        var owner = [CChar](repeating: 0, count: 256)
        var errorName = [CChar](repeating: 0, count: 256)
        var ownerUID: UInt32 = 0
        let owned = cordon_bus_name_owner(
            bus, "org.freedesktop.login1", &owner, owner.count, &ownerUID, &errorName, errorName.count)
        guard owned >= 0 else { throw LookupError("no logind on the system bus", owned) }
        guard ownerUID == 0 else {
            throw LookupError(
                description: "org.freedesktop.login1 is owned by uid \(ownerUID), not root: not the system's logind")
        }
        var buffer = [CChar](repeating: 0, count: 512)
        let found = cordon_bus_prompt_session_path(bus, sessionID, uid, &buffer, buffer.count)
        guard found >= 0 else {
            let which = sessionID.map { "logind session \($0)" } ?? "a logind session of this user"
            throw LookupError("no \(which)", found)
        }
        let path = Self.string(buffer)
        func property(_ name: String) throws(LookupError) -> String {
            var value = [CChar](repeating: 0, count: 512)
            let result = cordon_bus_session_string(bus, path, name, &value, value.count)
            guard result >= 0 else { throw LookupError("cannot read \(name) of \(path)", result) }
            return Self.string(value)
        }
        return LogindSession(
            path: path, type: try property("Type"), display: try property("Display"), tty: try property("TTY"))
    }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension LogindSession.LookupError {
    init(_ what: String, _ result: Int32) {
        description = "\(what): \(String(cString: strerror(-result)))"
    }
}
