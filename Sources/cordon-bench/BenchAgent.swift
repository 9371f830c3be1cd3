import Foundation

/// A `cordond` on a temporary directory (release build next to this binary, insecure fast KDF),
/// initialized and unlocked, with a control connection for Lock and Unlock.
final class BenchAgent {
    static let passcode = "bench-passcode-4711"
    let process: Process
    let socket: String
    let control: VarlinkConnection

    /// Starts the agent in `directory` (with `adminPolicies` copied into its admin policy
    /// directory and `arguments` added to its flags), then initializes and unlocks it.
    init(directory: String, adminPolicies: [String] = [], arguments: [String] = []) throws {
        // DaemonLauncher's child inherits this: the same as `--insecure-fast-kdf`.
        setenv("CORDON_INSECURE_FAST_KDF", "1", 1)
        setenv("CORDON_TEST_MODE", "1", 1)
        let started = try DaemonLauncher.start(in: directory, adminPolicies: adminPolicies, arguments: arguments)
        process = started.process
        socket = started.socket
        do {
            control = try VarlinkConnection(path: socket)
            try control.call("io.cordon.Agent.Initialize", ["passcode": Self.passcode])
            if try state() != "unlocked" {
                try control.call("io.cordon.Agent.Unlock", ["passcode": Self.passcode])
            }
            let now = try state()
            guard now == "unlocked" else { throw FanoutError.agent("state \(now) after initialize + unlock") }
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// The agent's lifecycle state.
    func state() throws -> String {
        let status = try control.call("io.cordon.Agent.GetStatus")["status"] as? [String: Any]
        return status?["state"] as? String ?? "?"
    }

    /// Sends Unlock within the reauthentication grace (no passcode), falling back to the passcode.
    func unlock() throws {
        do {
            try control.call("io.cordon.Agent.Unlock")
        } catch FanoutError.agent(let detail) where detail.hasSuffix("PasscodeRequired") {
            try control.call("io.cordon.Agent.Unlock", ["passcode": Self.passcode])
        }
    }

    /// Stops the agent (SIGTERM) and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
