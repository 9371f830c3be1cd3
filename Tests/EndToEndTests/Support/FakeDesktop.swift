import Foundation

/// A private `dbus-daemon` with a stand-in for logind and the screen savers on it, driven
/// through a control FIFO. One bus plays both the system and the session bus.
///
/// The logind session has the properties a prompt is placed by (`Type`, `Display`, `TTY`;
/// `session` sets them); the user's `Display` session is the same one.
final class FakeDesktop: Sendable {

    let root: TemporaryDirectory
    let bus: LineReader
    let standIn: LineReader
    let address: String
    var controlPath: String { root.appending("control") }

    /// With `anyUser`, processes of any uid may join the bus (an agent run as the test user).
    init(session: [String: String] = [:], anyUser: Bool = false) async throws {
        root = try TemporaryDirectory()
        let config = root.appending("bus.conf")
        try Self.busConfig(socket: root.appending("bus.sock"), anyUser: anyUser)
            .write(toFile: config, atomically: true, encoding: .utf8)
        bus = try LineReader(
            URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config)", "--print-address", "--nofork"])
        let reader = bus
        try await eventually("dbus-daemon prints its address") { !reader.snapshot.isEmpty }
        address = bus.snapshot.first ?? ""
        let script = root.appending("standin.py")
        try Self.standInScript.write(toFile: script, atomically: true, encoding: .utf8)
        let properties = String(decoding: try JSONSerialization.data(withJSONObject: session), as: UTF8.self)
        standIn = try LineReader(
            URL(fileURLWithPath: "/usr/bin/python3"), [script, address, root.appending("control"), properties])
        try await waitFor("ready")
    }

    /// Asks the stand-in to emit: lock, lockedhint, idlehint, screensaver, gnome, sleep, wake; or
    /// `nopid`: from now on `GetSessionByPID` fails (the agent is in no session).
    func send(_ command: String) throws {
        guard let handle = FileHandle(forWritingAtPath: controlPath) else { throw CocoaError(.fileNoSuchFile) }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data((command + "\n").utf8))
    }

    /// Waits until the stand-in printed `line`.
    func waitFor(_ line: String) async throws {
        let standIn = self.standIn
        try await eventually("the stand-in prints \(line)") {
            guard standIn.process.isRunning else { throw CocoaError(.executableLoad) }
            return standIn.snapshot.contains(line)
        }
    }

    /// Stops both processes and removes the directory.
    func cleanUp() {
        // The test runner's blocked signal mask is inherited: only SIGKILL is sure to stop them.
        for process in [standIn.process, bus.process] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }

    /// A private bus's configuration: anyone on it may own any name; with `anyUser`, processes of
    /// any uid may connect too (a bus of one uid that another's processes join).
    static func busConfig(socket: String, anyUser: Bool = false) -> String {
        let users = anyUser ? "\n    <allow user=\"*\"/>\n    <allow receive_sender=\"*\"/>" : ""
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
              "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">\(users)
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
    }

    /// logind (Manager with GetSession/GetSessionByPID/GetUser/Inhibit/PrepareForSleep, a session
    /// with Lock, PropertiesChanged and the properties Type, Display and TTY, a user whose Display
    /// is that session) and both screen savers. Prints `inhibit`, `released` (the inhibitor's last
    /// copy was closed), `getuser`, `get <property>` and `emitted <command>`.
    static let standInScript = #"""
        import json, os, sys
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        control = sys.argv[2]
        SESSION = "/org/freedesktop/login1/session/c1"
        USER = "/org/freedesktop/login1/user/_%d" % os.getuid()
        MANAGER = "org.freedesktop.login1.Manager"
        PROPERTIES = "org.freedesktop.DBus.Properties"
        session_properties = {"Type": "unspecified", "Display": "", "TTY": ""}
        session_properties.update(json.loads(sys.argv[3]))
        state = {"bypid": True}

        def out(line):
            print(line, flush=True)

        class Manager(dbus.service.Object):
            @dbus.service.method(MANAGER, in_signature="u", out_signature="o")
            def GetSessionByPID(self, pid):
                if not state["bypid"]:
                    raise dbus.exceptions.DBusException(
                        "no session", name="org.freedesktop.login1.NoSessionForPID")
                return dbus.ObjectPath(SESSION)

            @dbus.service.method(MANAGER, in_signature="u", out_signature="o")
            def GetUser(self, uid):
                out("getuser")
                return dbus.ObjectPath(USER)

            @dbus.service.method(MANAGER, in_signature="s", out_signature="o")
            def GetSession(self, session_id):
                return dbus.ObjectPath(SESSION)

            @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                r, w = os.pipe()
                GLib.io_add_watch(r, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, self.released)
                out("inhibit %s %s" % (what, mode))
                fd = dbus.types.UnixFd(w)
                os.close(w)
                return fd

            def released(self, fd, condition):
                out("released")
                os.close(fd)
                return False

            @dbus.service.signal(MANAGER, signature="b")
            def PrepareForSleep(self, start):
                pass

        class Session(dbus.service.Object):
            @dbus.service.signal("org.freedesktop.login1.Session", signature="")
            def Lock(self):
                pass

            @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
            def PropertiesChanged(self, interface, changed, invalidated):
                pass

            @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
            def Get(self, interface, name):
                out("get " + name)
                return dbus.String(session_properties[name])

        class User(dbus.service.Object):
            @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
            def Get(self, interface, name):
                return dbus.Struct(("c1", dbus.ObjectPath(SESSION)), signature="so")

        class ScreenSaver(dbus.service.Object):
            @dbus.service.signal("org.freedesktop.ScreenSaver", signature="b")
            def ActiveChanged(self, active):
                pass

        class GnomeScreenSaver(dbus.service.Object):
            @dbus.service.signal("org.gnome.ScreenSaver", signature="b")
            def ActiveChanged(self, active):
                pass

        names = [dbus.service.BusName(n, bus) for n in
                 ("org.freedesktop.login1", "org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver")]
        manager = Manager(bus, "/org/freedesktop/login1")
        session = Session(bus, SESSION)
        user = User(bus, USER)
        saver = ScreenSaver(bus, "/org/freedesktop/ScreenSaver")
        gnome = GnomeScreenSaver(bus, "/org/gnome/ScreenSaver")

        def hint(name):
            props = dbus.Dictionary({name: dbus.Boolean(True)}, signature="sv")
            session.PropertiesChanged("org.freedesktop.login1.Session", props, dbus.Array([], signature="s"))

        commands = {
            "lock": lambda: session.Lock(),
            "lockedhint": lambda: hint("LockedHint"),
            "idlehint": lambda: hint("IdleHint"),
            "screensaver": lambda: saver.ActiveChanged(True),
            "gnome": lambda: gnome.ActiveChanged(True),
            "sleep": lambda: manager.PrepareForSleep(True),
            "wake": lambda: manager.PrepareForSleep(False),
            "nopid": lambda: state.update(bypid=False),
        }

        os.mkfifo(control)
        reader = os.open(control, os.O_RDONLY | os.O_NONBLOCK)
        keep = os.open(control, os.O_WRONLY)
        pending = [b""]

        def on_control(fd, condition):
            pending[0] += os.read(fd, 4096)
            while b"\n" in pending[0]:
                line, pending[0] = pending[0].split(b"\n", 1)
                command = line.decode().strip()
                commands[command]()
                out("emitted " + command)
            return True

        GLib.io_add_watch(reader, GLib.PRIORITY_DEFAULT, GLib.IO_IN, on_control)
        out("ready")
        GLib.MainLoop().run()
        """#
}
