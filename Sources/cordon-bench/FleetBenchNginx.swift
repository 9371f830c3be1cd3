import ArgumentParser
import Foundation

/// nginx (Debian's nginx-light) serving the fleet benchmark's repository over HTTPS, with a CA and
/// a leaf made by openssl; one worker, no access log (its writes would be measured too).
final class FleetBenchNginx: Sendable {
    let base: String
    let caFile: String
    let directory: String
    private let process: Process

    init(serving root: String, directory: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") else {
            throw ValidationError("fleet-poll needs nginx (apt-get install nginx-light)")
        }
        self.directory = directory + "/nginx"
        for path in ["", "/logs", "/tmp"] {
            try FileManager.default.createDirectory(atPath: self.directory + path, withIntermediateDirectories: true)
        }
        caFile = self.directory + "/ca.pem"
        let d = self.directory
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", d + "/ca.key",
            "-out", caFile, "-subj", "/CN=Cordon bench CA", "-days", "2",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
            .write(toFile: d + "/leaf.ext", atomically: true, encoding: .utf8)
        try Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", d + "/leaf.key",
            "-out", d + "/leaf.csr", "-subj", "/CN=127.0.0.1",
        ])
        try Self.openssl([
            "x509", "-req", "-in", d + "/leaf.csr", "-CA", caFile, "-CAkey", d + "/ca.key", "-CAcreateserial",
            "-out", d + "/leaf.pem", "-days", "2", "-extfile", d + "/leaf.ext",
        ])
        let port = try FleetBenchNginx.freePort()
        base = "https://127.0.0.1:\(port)/"
        let configuration = """
            user root root;
            worker_processes 1;
            worker_rlimit_nofile 65536;
            pid \(d)/nginx.pid;
            error_log \(d)/logs/error.log warn;
            events { worker_connections 16384; }
            http {
                access_log off;
                keepalive_requests 1000000;
                keepalive_timeout 120s;
                client_body_temp_path \(d)/tmp/body;
                proxy_temp_path \(d)/tmp/proxy;
                fastcgi_temp_path \(d)/tmp/fastcgi;
                uwsgi_temp_path \(d)/tmp/uwsgi;
                scgi_temp_path \(d)/tmp/scgi;
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_certificate \(d)/leaf.pem;
                    ssl_certificate_key \(d)/leaf.key;
                    root \(root);
                }
            }
            """
        try configuration.write(toFile: d + "/nginx.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", d, "-c", d + "/nginx.conf", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func ready() async throws {
        for _ in 0..<200 {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-s", "-o", "/dev/null", "--cacert", caFile, base + "timestamp.json"]
            curl.standardOutput = FileHandle.nullDevice
            curl.standardError = FileHandle.nullDevice
            try curl.run()
            curl.waitUntilExit()
            if curl.terminationStatus == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ValidationError("nginx did not start: \(directory)/logs/error.log")
    }

    /// CPU time of nginx's master and workers, in nanoseconds.
    func cpuNanoseconds() -> UInt64 {
        let master = process.processIdentifier
        let children = (try? String(contentsOfFile: "/proc/\(master)/task/\(master)/children", encoding: .utf8)) ?? ""
        let pids = [master] + children.split(separator: " ").compactMap { Int32($0) }
        return pids.reduce(0) { $0 + ProcessCPU.nanoseconds(pid: $1) }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("openssl \(arguments[0]) failed") }
    }

    /// A port nothing listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ValidationError("no socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw ValidationError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// This process's resident memory.
enum FleetBenchProcess {
    static func residentBytes() -> Int {
        ((try? ProcessMemory.read(pid: getpid()))?.rssKiB ?? 0) * 1024
    }
}
