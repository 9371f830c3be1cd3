import Foundation

/// A private `dbus-daemon` on a temporary directory, its limits raised for thousands of
/// connections from one user: the baseline of the fan-out and memory benchmarks.
final class DBusDaemon {
    /// Started with default signal dispositions and an empty mask (`SpawnedProcess`): started
    /// through Foundation's `Process`, it inherited a mask blocking SIGTERM, and `stop` waited
    /// for it forever.
    private let process: SpawnedProcess
    /// The address printed by `--print-address` (`unix:path=…,guid=…`).
    let address: String

    /// Writes the configuration into `directory` and starts `executable --nofork --print-address`.
    init(directory: String, executable: String) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw FanoutError.baseline("\(executable) not found (apt-get install dbus-daemon)")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = directory + "/bus.conf"
        try Self.configuration(socket: directory + "/bus.sock").write(
            toFile: configuration, atomically: true, encoding: .utf8)
        let printed = directory + "/address"
        let process = try SpawnedProcess(
            executable: executable, arguments: ["--config-file=" + configuration, "--print-address", "--nofork"],
            environment: [:], output: printed)
        let line = { () -> String? in
            guard let text = try? String(contentsOfFile: printed, encoding: .utf8), text.contains("\n") else {
                return nil
            }
            return text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        do {
            try process.wait(upTo: 10, what: "printing its address") { line() != nil }
        } catch {
            process.stop()
            throw FanoutError.baseline("\(executable): \(error)")
        }
        self.process = process
        address = line() ?? ""
    }

    var pid: Int32 { process.pid }

    /// Stops the daemon (SIGTERM, then SIGKILL after 2 s) and reaps it.
    func stop() {
        process.stop()
    }

    /// A session-bus-like configuration: everything allowed, one socket, no activation, and the
    /// connection and match limits far above what the benchmark opens.
    static func configuration(socket: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="auth_timeout">240000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_incomplete_connections">10000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_pending_service_starts">10000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>

        """
    }
}
