import Foundation

/// A private `dbus-daemon` and a system service of someone's making on it. The fprintd owns
/// `net.reactivated.Fprint`, says a finger is enrolled and answers every `VerifyStart` with
/// `VerifyStatus("verify-match", true)` — no reader, no finger. The logind owns
/// `org.freedesktop.login1` and, once asked (`emit()`), emits `PrepareForSleep(true)` every 50 ms. The bus and the impostor
/// each run as root or as `NobodyAgent.uid` (`setpriv`), so a test can give the name to either.
final class ImpostorBus: Sendable {
    /// Which service the impostor plays.
    enum Service: Sendable {
        case fprintd, logind
    }

    /// Who runs a process.
    enum User: Sendable {
        case root, nobody

        var prefix: [String] { self == .root ? [] : NobodyAgent.asUser }
    }

    let root: TemporaryDirectory
    let bus: LineReader
    let impostor: LineReader
    /// The bus's address, `unix:path=…`.
    let address: String

    /// Starts the bus as `busUser` and the impostor of `service` as `impostorUser`, and waits until
    /// it owns the name.
    init(_ service: Service = .fprintd, busUser: User, impostorUser: User) async throws {
        root = try TemporaryDirectory()
        chmod(root.path, 0o755)  // an agent run as the test user reaches the bus in it
        let directory = root.appending("bus")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if busUser == .nobody {
            try await NobodyAgent.run(["/bin/chown", "\(NobodyAgent.uid):\(NobodyAgent.uid)", directory])
        }
        let config = root.appending("bus.conf")
        try FakeDesktop.busConfig(socket: directory + "/bus.sock", anyUser: true).write(
            toFile: config, atomically: true, encoding: .utf8)
        let daemon =
            busUser.prefix + ["/usr/bin/dbus-daemon", "--config-file=\(config)", "--print-address", "--nofork"]
        bus = try LineReader(URL(fileURLWithPath: daemon[0]), Array(daemon.dropFirst()))
        let reader = bus
        try await eventually("dbus-daemon prints its address") { !reader.snapshot.isEmpty }
        address = bus.snapshot.first ?? ""
        let script = root.appending("impostor.py")
        try (service == .fprintd ? Self.fprintd : Self.logind).write(toFile: script, atomically: true, encoding: .utf8)
        let command = impostorUser.prefix + ["/usr/bin/python3", script, address]
        impostor = try LineReader(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        let impostor = self.impostor
        try await eventually("the impostor owns its name") {
            guard impostor.process.isRunning else { throw CocoaError(.executableLoad) }
            return impostor.snapshot.contains("ready")
        }
    }

    /// Asks the logind impostor to start emitting `PrepareForSleep(true)`.
    func emit() async throws {
        let result = try await runCommand(
            URL(fileURLWithPath: "/usr/bin/dbus-send"),
            [
                "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
                "org.example.Impostor.Emit",
            ])
        guard result.status == 0 else { throw CocoaError(.executableLoad) }
    }

    /// The calls the impostor was asked, by member name (`GetDefaultDevice`, `Claim`, …).
    var calls: [String] { impostor.snapshot.filter { $0.hasPrefix("call ") }.map { String($0.dropFirst(5)) } }

    /// Stops both processes and removes the directory.
    func cleanUp() {
        for process in [impostor.process, bus.process] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }

    static let fprintd = #"""
        import sys
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        DEVICE = "net.reactivated.Fprint.Device"
        PATH = "/net/reactivated/Fprint/Device/0"

        def out(line):
            print(line, flush=True)

        class Manager(dbus.service.Object):
            @dbus.service.method("net.reactivated.Fprint.Manager", out_signature="o")
            def GetDefaultDevice(self):
                out("call GetDefaultDevice")
                return dbus.ObjectPath(PATH)

        class Device(dbus.service.Object):
            @dbus.service.method(DEVICE, in_signature="s", out_signature="as")
            def ListEnrolledFingers(self, user):
                out("call ListEnrolledFingers")
                return ["right-index-finger"]

            @dbus.service.method(DEVICE, in_signature="s")
            def Claim(self, user):
                out("call Claim")

            @dbus.service.method(DEVICE, in_signature="s")
            def VerifyStart(self, finger):
                out("call VerifyStart")
                GLib.idle_add(lambda: self.VerifyStatus("verify-match", True) and False)

            @dbus.service.method(DEVICE)
            def VerifyStop(self):
                out("call VerifyStop")

            @dbus.service.method(DEVICE)
            def Release(self):
                out("call Release")

            @dbus.service.signal(DEVICE, signature="sb")
            def VerifyStatus(self, result, done):
                pass

        name = dbus.service.BusName("net.reactivated.Fprint", bus)
        manager = Manager(bus, "/net/reactivated/Fprint/Manager")
        device = Device(bus, PATH)
        out("ready")
        GLib.MainLoop().run()
        """#

    static let logind = #"""
        import os, sys
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        MANAGER = "org.freedesktop.login1.Manager"

        def out(line):
            print(line, flush=True)

        class Manager(dbus.service.Object):
            @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                out("call Inhibit")
                return dbus.types.UnixFd(os.open("/dev/null", os.O_RDONLY))

            @dbus.service.signal(MANAGER, signature="b")
            def PrepareForSleep(self, start):
                pass

            @dbus.service.method("org.example.Impostor")
            def Emit(self):
                out("call Emit")
                GLib.timeout_add(50, sleep)

        name = dbus.service.BusName("org.freedesktop.login1", bus)
        manager = Manager(bus, "/org/freedesktop/login1")
        out("ready")

        def sleep():
            manager.PrepareForSleep(True)
            return True

        GLib.MainLoop().run()
        """#
}
