import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TPM 2.0 simulator (Debian `swtpm`) on free TCP ports in its own temporary state directory,
/// for tests: the TSS reaches it with ``tcti``, `tpm2-tools` with ``tpm2(_:)``. ``stop()`` kills it
/// and removes the state.
final class SoftwareTPM: @unchecked Sendable {
    let stateDirectory: String
    let port: Int
    let process: Process

    /// The TCTI configuration for the TSS and `TPM2TOOLS_TCTI`.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// Starts a fresh simulator (an empty state directory: a new TPM, its own storage seed).
    init() throws {
        stateDirectory = "/tmp/cordon-swtpm-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<20 {
            let candidate = Int.random(in: 20_000...60_000)
            guard Self.isFree(candidate), Self.isFree(candidate + 1) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/swtpm")
            process.arguments = [
                "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)", "--server",
                "type=tcp,port=\(candidate),bindaddr=127.0.0.1", "--ctrl",
                "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                lastError = error
                break
            }
            // Ready once it accepts connections; a lost race for the port ends the process.
            for _ in 0..<500 where process.isRunning {
                if Self.accepts(candidate) {
                    self.port = candidate
                    self.process = process
                    return
                }
                usleep(10_000)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            lastError = SoftwareTPMError.notReady(candidate)
        }
        try? FileManager.default.removeItem(atPath: stateDirectory)
        throw lastError ?? SoftwareTPMError.noFreePort
    }

    /// Runs `tpm2_<tool>` with `arguments` against this simulator; returns its standard output.
    @discardableResult
    func tpm2(_ tool: String, _ arguments: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_" + tool)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TPM2TOOLS_TCTI"] = tcti
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SoftwareTPMError.toolFailed(tool, String(decoding: errorData, as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Sets a small dictionary-attack threshold (`tpm2_dictionarylockout`) and clears the counter.
    func setLockout(maxTries: Int, recoverySeconds: Int = 600) throws {
        try tpm2("dictionarylockout", ["--clear-lockout"])
        try tpm2(
            "dictionarylockout",
            [
                "--setup-parameters", "--max-tries=\(maxTries)", "--recovery-time=\(recoverySeconds)",
                "--lockout-recovery-time=\(recoverySeconds)",
            ])
    }

    /// A variable TPM property as `tpm2_getcap properties-variable` reports it (TPM2_PT_LOCKOUT_COUNTER, …).
    func variableProperty(_ name: String) throws -> Int? {
        let output = try tpm2("getcap", ["properties-variable"])
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let index = lines.firstIndex(where: { $0.hasPrefix(name + ":") }) else { return nil }
        // "TPM2_PT_LOCKOUT_COUNTER: 0x3" on one line.
        let value = lines[index].dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        return value.hasPrefix("0x") ? Int(value.dropFirst(2), radix: 16) : Int(value)
    }

    /// Kills the simulator and removes its state.
    func stop() {
        // SIGKILL: swtpm inherits the test runner's ignored SIGTERM.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    private static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return address
    }
}

enum SoftwareTPMError: Error {
    case noFreePort
    case notReady(Int)
    case toolFailed(String, String)
}
