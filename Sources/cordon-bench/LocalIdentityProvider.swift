import Foundation

/// The local authlib provider (`identity_provider.py`) on 127.0.0.1 for the benchmark, ended with
/// it (its standard input closes).
final class LocalIdentityProvider {
    let process = Process()
    let lifeline = Pipe()
    let port: Int

    /// Starts the provider on `port` (0: one the kernel chooses; a port given again after `stop`
    /// is the same address back, with none of the old instance's tokens).
    init(peers: String, port: Int = 0) throws {
        let script = peers + "/identity_provider.py"
        guard FileManager.default.fileExists(atPath: script) else {
            throw BenchError.daemon("no \(script): run from the repository or pass --peers")
        }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, String(port)]
        process.standardInput = lifeline
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            throw BenchError.daemon("the identity provider did not start (authlib and Flask installed?): \(text)")
        }
        self.port = port
    }

    /// Approves `userCode` as the user would.
    func approve(_ userCode: String) throws {
        _ = try LoopbackHTTP.object(port: port, path: "/admin/device", form: "user_code=\(userCode)&action=approve")
    }

    /// A refresh token of the benchmark's own, from a device grant it approves itself.
    func deviceGrantRefreshToken() throws -> String {
        let grant = try LoopbackHTTP.object(
            port: port, path: "/device_authorization", form: "client_id=\(IdentityBenchmark.clientID)&scope=openid")
        guard let deviceCode = grant["device_code"] as? String, let userCode = grant["user_code"] as? String else {
            throw BenchError.daemon("the device authorization gave no code")
        }
        try approve(userCode)
        let tokens = try LoopbackHTTP.object(
            port: port, path: "/token",
            form:
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=\(deviceCode)&client_id=\(IdentityBenchmark.clientID)"
        )
        guard let refreshToken = tokens["refresh_token"] as? String else {
            throw BenchError.daemon("the device grant gave no refresh token")
        }
        return refreshToken
    }

    func stop() {
        try? lifeline.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
