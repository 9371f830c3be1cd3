import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The CT-KIP fake server of the PyPI package `rsa-ct-kip` (`rsa_ct_kip.fakeserver`, RSA's
/// dialect) on 127.0.0.1, over TLS with a self-signed certificate made here with openssl. Its
/// `app.run` is replaced by a wrapper that serves on a free port and, for the failure tests,
/// `mode` makes every answer misbehave: `garbage`, `500`, `oversize` or `stall`.
final class CTKIPFakeServer: @unchecked Sendable {
    let directory: String
    let port: Int
    let process: Process
    /// The self-signed certificate (PEM), a CA file for `cordond --ctkip-ca`.
    var certificate: String { directory + "/cert.pem" }
    var url: String { "https://127.0.0.1:\(port)/ctkip/services/CtkipService" }

    static let wrapper = #"""
        import sys, ssl, time, flask
        from werkzeug.serving import make_server
        certfile, mode = sys.argv[1], sys.argv[2]
        def run(self, *args, **kwargs):
            if mode != "normal":
                @self.before_request
                def misbehave():
                    if mode == "500": flask.abort(500)
                    if mode == "garbage": return flask.Response("this is not <xml", mimetype="text/xml")
                    if mode == "oversize": return flask.Response("<a>" + "A" * (1 << 20) + "</a>", mimetype="text/xml")
                    if mode == "stall": time.sleep(120)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile)
            server = make_server("127.0.0.1", 0, self, ssl_context=context, threaded=True)
            print("PORT", server.port, flush=True)
            server.serve_forever()
        flask.Flask.run = run
        import rsa_ct_kip.fakeserver
        """#

    init(mode: String = "normal") throws {
        directory = "/tmp/cordon-ctkip-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.wrapper.write(toFile: directory + "/serve.py", atomically: true, encoding: .utf8)
        try Self.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/key.pem", "-out",
                directory + "/cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
        let pem =
            try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)
            + String(contentsOfFile: directory + "/key.pem", encoding: .utf8)
        try pem.write(toFile: directory + "/server.pem", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", directory + "/serve.py", directory + "/server.pem", mode]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        _ = FileManager.default.createFile(atPath: directory + "/log", contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/log"))
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Ready once it prints its port (bounded: 30 s).
        for _ in 0..<3000 where process.isRunning {
            if let line = serverLog(of: directory).split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }),
                let port = Int(line.dropFirst(5))
            {
                self.port = port
                return
            }
            usleep(10_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw CTKIPFakeServerError.notReady(serverLog(of: directory))
    }

    /// The server's output: what it received and derived (its K_TOKEN and Token ID lines).
    var log: String { serverLog(of: directory) }

    /// The seeds (hex) and serials the server derived, in order.
    var provisioned: [(seed: String, serial: String)] {
        let lines = log.split(separator: "\n")
        let seeds = lines.filter { $0.hasPrefix("K_TOKEN (hex):") }.map {
            String($0.split(separator: "'").dropFirst().first ?? "")
        }
        let serials = lines.filter { $0.hasPrefix("Token ID:") }.map {
            String($0.dropFirst("Token ID:".count).trimmingCharacters(in: .whitespaces))
        }
        return Array(zip(seeds, serials))
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func run(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CTKIPFakeServerError.toolFailed(path) }
    }
}

private func serverLog(of directory: String) -> String {
    (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
}

enum CTKIPFakeServerError: Error {
    case notReady(String)
    case toolFailed(String)
}
