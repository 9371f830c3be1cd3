import Foundation

/// A local HTTPS/1.1 server in Python (keep-alive, 64-byte answers) for `cordon-bench channel`,
/// and the Python client the benchmark runs directly and through the tunnel.
final class ChannelBenchServer {
    let process = Process()
    let port: Int
    private let input = Pipe()

    static let server = """
        import http.server, ssl, sys, threading
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            def do_GET(self):
                body = b"x" * 64
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print("PORT %d" % server.server_address[1], flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        """

    static let client = """
        import http.client, json, os, ssl, sys, time
        port, ca, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        context = ssl.create_default_context(cafile=ca)
        tunnel = os.environ["CORDON_TUNNEL_API_TCP"].split(":")
        import socket
        def nodelay(connection):
            connection.connect()
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection
        def direct():
            return nodelay(http.client.HTTPSConnection("127.0.0.1", port, context=context))
        def through():
            return nodelay(http.client.HTTPConnection(tunnel[0], int(tunnel[1])))
        def fresh(make):
            samples = []
            for _ in range(count):
                start = time.perf_counter_ns()
                connection = make()
                connection.request("GET", "/")
                connection.getresponse().read()
                connection.close()
                samples.append(time.perf_counter_ns() - start)
            return samples
        def kept(make):
            connection = make()
            samples = []
            for _ in range(count):
                start = time.perf_counter_ns()
                connection.request("GET", "/")
                connection.getresponse().read()
                samples.append(time.perf_counter_ns() - start)
            connection.close()
            return samples
        def row(name, samples):
            samples.sort()
            median = samples[len(samples) // 2] / 1000
            p99 = samples[min(len(samples) - 1, len(samples) * 99 // 100)] / 1000
            rate = len(samples) / (sum(samples) / 1e9)
            print("%-34s %10.1f %10.1f %10.0f" % (name, median, p99, rate))
        for name, make, mode in [("direct TLS, new connection", direct, fresh),
                                 ("tunnel, new connection", through, fresh),
                                 ("direct TLS, kept alive", direct, kept),
                                 ("tunnel, kept alive", through, kept)]:
            row(name, mode(make))
        """

    init(directory: String, certificate: String, key: String) throws {
        let script = directory + "/server.py"
        try Self.server.write(toFile: script, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, certificate, key]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw BenchError.daemon("the Python HTTPS server did not start: \(text)") }
        self.port = port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
