import Foundation

/// A private `dbus-daemon` playing the system bus, with the real fprintd (Debian `fprintd`) on
/// libfprint's virtual device (`FP_VIRTUAL_DEVICE`, a socket taking `SCAN <finger-id>`), a polkit
/// stand-in allowing everything (`python3-dbusmock`'s `polkitd` template), and a helper that
/// enrolled finger `finger-a` for this user through fprintd and can forge `VerifyStatus` signals
/// from a connection that does not own `net.reactivated.Fprint`. With `user` (``TestUser``), the
/// finger is enrolled for that user, processes of any uid may join the bus (an agent run as the
/// user), and the forged signals come from a process of that user's.
final class FakeFingerprintBus: Sendable {
    let root: TemporaryDirectory
    let bus: LineReader
    let polkit: LineReader
    let fprintd: LineReader
    let helper: LineReader
    let address: String
    var controlPath: String { root.appending("control") }
    var deviceSocket: String { root.appending("fprint.sock") }

    init(user: String? = nil) async throws {
        root = try TemporaryDirectory()
        let config = root.appending("bus.conf")
        try FakeDesktop.busConfig(socket: root.appending("bus.sock"), anyUser: user != nil)
            .write(toFile: config, atomically: true, encoding: .utf8)
        bus = try LineReader(
            URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config)", "--print-address", "--nofork"])
        let reader = bus
        try await eventually("dbus-daemon prints its address") { !reader.snapshot.isEmpty }
        address = bus.snapshot.first ?? ""
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": address]
        polkit = try LineReader(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-m", "dbusmock", "--system", "--template", "polkitd"],
            environment: environment)
        try FileManager.default.createDirectory(atPath: root.appending("state"), withIntermediateDirectories: true)
        // fprintd logs on stderr: `start verification` says when a scan is awaited.
        fprintd = try LineReader(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec /usr/libexec/fprintd --no-timeout 2>&1"],
            environment: environment.merging([
                "FP_VIRTUAL_DEVICE": root.appending("fprint.sock"), "STATE_DIRECTORY": root.appending("state"),
                "G_MESSAGES_DEBUG": "all",
            ]) { $1 })
        let script = root.appending("helper.py")
        try Self.helperScript.write(toFile: script, atomically: true, encoding: .utf8)
        helper = try LineReader(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [script, address, root.appending("control"), root.appending("fprint.sock"), user ?? ""]
                + (user == nil ? [] : TestUser.asUser))
        try await waitFor("enrolled finger-a")
    }

    /// How many verifications fprintd has started.
    var verificationsStarted: Int { fprintd.snapshot.filter { $0.contains("start verification") }.count }

    /// Sends `SCAN finger` to the virtual reader once fprintd has started verification number `number`.
    func scan(_ finger: String, atVerification number: Int) async throws {
        try await eventually("fprintd starts verification \(number)") { self.verificationsStarted >= number }
        try send("scan \(finger)")
        try await waitFor("scanned \(finger)")
    }

    /// Asks the helper: `scan <finger>`, or `forge` (emit VerifyStatus verify-match, done, from the
    /// helper's own connection on fprintd's device path).
    func send(_ command: String) throws {
        guard let handle = FileHandle(forWritingAtPath: controlPath) else { throw CocoaError(.fileNoSuchFile) }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data((command + "\n").utf8))
    }

    /// Waits until the helper printed `line`.
    func waitFor(_ line: String) async throws {
        let helper = self.helper
        try await eventually("the helper prints \(line)") {
            guard helper.process.isRunning else { throw CocoaError(.executableLoad) }
            return helper.snapshot.contains(line)
        }
    }

    /// Stops every process and removes the directory.
    func cleanUp() {
        for process in [helper.process, fprintd.process, polkit.process, bus.process] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }

    static let helperScript = #"""
        import os, socket, sys, time
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        control, device_socket, user, as_user = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
        DEVICE = "net.reactivated.Fprint.Device"

        FORGE = """
        import sys, dbus
        bus = dbus.bus.BusConnection(sys.argv[1])
        signal = dbus.lowlevel.SignalMessage(sys.argv[2], "net.reactivated.Fprint.Device", "VerifyStatus")
        signal.append("verify-match", True, signature="sb")
        bus.send_message(signal)
        bus.flush()
        """

        def out(line):
            print(line, flush=True)

        def scan(finger):
            s = socket.socket(socket.AF_UNIX)
            s.connect(device_socket)
            s.sendall(("SCAN " + finger).encode())
            s.close()

        for name in ("org.freedesktop.PolicyKit1", "net.reactivated.Fprint"):
            while not bus.name_has_owner(name):
                time.sleep(0.02)
        polkit = bus.get_object("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority")
        polkit.AllowUnknown(True, dbus_interface="org.freedesktop.DBus.Mock")
        manager = bus.get_object("net.reactivated.Fprint", "/net/reactivated/Fprint/Manager")
        path = manager.GetDefaultDevice(dbus_interface="net.reactivated.Fprint.Manager")
        device = bus.get_object("net.reactivated.Fprint", path)
        loop = GLib.MainLoop()

        def enroll_status(result, done):
            if done:
                loop.quit()
            else:
                scan("finger-a")

        receiver = bus.add_signal_receiver(enroll_status, "EnrollStatus", DEVICE)
        device.Claim(user, dbus_interface=DEVICE)
        device.EnrollStart("right-index-finger", dbus_interface=DEVICE)
        scan("finger-a")
        loop.run()
        device.EnrollStop(dbus_interface=DEVICE)
        device.Release(dbus_interface=DEVICE)
        receiver.remove()
        if "right-index-finger" in device.ListEnrolledFingers(user, dbus_interface=DEVICE):
            out("enrolled finger-a")

        class Forger(dbus.service.Object):
            @dbus.service.signal(DEVICE, signature="sb")
            def VerifyStatus(self, result, done):
                pass

        forger = Forger(bus, path)

        os.mkfifo(control)
        reader = os.open(control, os.O_RDONLY | os.O_NONBLOCK)
        keep = os.open(control, os.O_WRONLY)
        pending = [b""]

        def on_control(fd, condition):
            pending[0] += os.read(fd, 4096)
            while b"\n" in pending[0]:
                line, pending[0] = pending[0].split(b"\n", 1)
                command = line.decode().strip()
                if command.startswith("scan "):
                    scan(command[5:])
                    out("scanned " + command[5:])
                elif command == "forge" and as_user:
                    # A process of the user's, on a connection of its own.
                    import subprocess
                    subprocess.run(as_user + [sys.executable, "-c", FORGE, sys.argv[1], path], check=True)
                    out("forged")
                elif command == "forge":
                    forger.VerifyStatus("verify-match", True)
                    out("forged")
            return True

        GLib.io_add_watch(reader, GLib.PRIORITY_DEFAULT, GLib.IO_IN, on_control)
        loop = GLib.MainLoop()
        loop.run()
        """#
}
