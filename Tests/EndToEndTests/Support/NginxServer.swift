import ChannelTestPeers
import Foundation

/// A real nginx (Debian's nginx-light) serving a directory over HTTPS with a certificate from the
/// test CA, and accepting PUTs under `/reports/` (WebDAV): the fleet tests' repository host.
final class NginxServer: @unchecked Sendable {
    let prefix: TemporaryDirectory
    let port: Int
    let pki: TestPKI
    private let process = Process()

    /// Where PUT reports land (`/reports/<name>`).
    var reportsDirectory: String { prefix.appending("www/reports") }
    var base: String { "https://127.0.0.1:\(port)/" }

    /// Starts nginx serving `root` at `/` over TLS; with `gzipLabel`, every file under `/targets/`
    /// is answered with `Content-Encoding: gzip` (a hostile host serving a compressed bomb).
    init(serving root: String, gzipLabel: Bool = false) throws {
        prefix = try TemporaryDirectory()
        pki = try TestPKI()
        port = try TestPorts.free()
        let leaf = try pki.leaf("repository", names: ["127.0.0.1"])
        for directory in ["logs", "tmp", "www/reports"] {
            try FileManager.default.createDirectory(
                atPath: prefix.appending(directory), withIntermediateDirectories: true)
        }
        let configuration = """
            user root root;
            worker_processes 1;
            pid \(prefix.appending("nginx.pid"));
            error_log \(prefix.appending("logs/error.log")) warn;
            events { worker_connections 4096; }
            http {
                access_log \(prefix.appending("logs/access.log"));
                client_body_temp_path \(prefix.appending("tmp/body"));
                proxy_temp_path \(prefix.appending("tmp/proxy"));
                fastcgi_temp_path \(prefix.appending("tmp/fastcgi"));
                uwsgi_temp_path \(prefix.appending("tmp/uwsgi"));
                scgi_temp_path \(prefix.appending("tmp/scgi"));
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_certificate \(leaf.certificate);
                    ssl_certificate_key \(leaf.key);
                    root \(root);
                    \(gzipLabel ? "location /targets/ { add_header Content-Encoding gzip always; }" : "")
                    location /reports/ {
                        root \(prefix.appending("www"));
                        dav_methods PUT;
                        create_full_put_path on;
                    }
                }
            }
            """
        try configuration.write(toFile: prefix.appending("nginx.conf"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", prefix.path, "-c", prefix.appending("nginx.conf"), "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    /// Waits until nginx accepts connections.
    func ready() async throws {
        try await eventually("nginx listens on \(port)") {
            guard process.isRunning else { throw EventuallyError(what: "nginx exited: \(errorLog)") }
            let result = try await runCommand(
                URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-o", "/dev/null", "--cacert", pki.caCertificate, base])
            return result.status == 0
        }
    }

    /// nginx's error log.
    var errorLog: String { (try? String(contentsOfFile: prefix.appending("logs/error.log"), encoding: .utf8)) ?? "" }

    /// The request lines of the access log.
    var accessLog: [String] {
        ((try? String(contentsOfFile: prefix.appending("logs/access.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        prefix.remove()
    }
}
