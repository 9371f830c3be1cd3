import Foundation

/// A private `dbus-daemon` playing the session bus with a notification server on it
/// (`python3-dbusmock`'s `notification_daemon` template), which logs every call it gets.
final class FakeNotificationServer: Sendable {
    let root: TemporaryDirectory
    let bus: LineReader
    let server: LineReader
    let address: String
    var logPath: String { root.appending("notifications.log") }

    /// With `anyUser`, processes of any uid may join the bus (an agent run as the test user).
    init(anyUser: Bool = false) async throws {
        root = try TemporaryDirectory()
        if anyUser { chmod(root.path, 0o755) }
        let config = root.appending("bus.conf")
        try FakeDesktop.busConfig(socket: root.appending("bus.sock"), anyUser: anyUser)
            .write(toFile: config, atomically: true, encoding: .utf8)
        bus = try LineReader(
            URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config)", "--print-address", "--nofork"])
        let reader = bus
        try await eventually("dbus-daemon prints its address") { !reader.snapshot.isEmpty }
        address = bus.snapshot.first ?? ""
        server = try LineReader(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-m", "dbusmock", "--session", "-l", root.appending("notifications.log"), "--template",
                "notification_daemon",
            ],
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        let address = self.address
        try await eventually("the notification server is on the bus") {
            let answer = try await runCommand(
                URL(fileURLWithPath: "/usr/bin/busctl"),
                [
                    "--address=\(address)", "call", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                    "org.freedesktop.Notifications", "GetServerInformation",
                ])
            return answer.status == 0
        }
    }

    /// The calls the server has logged, one per line (`<time> Notify "Cordon" 0 …`).
    var calls: [String] {
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops the server and the bus and removes the directory.
    func cleanUp() {
        for process in [server.process, bus.process] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }
}
