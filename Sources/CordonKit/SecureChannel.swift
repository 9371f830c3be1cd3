import CordonLocking
import CordonProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix

/// An HTTPS client that only talks to servers the app's network policy pins
/// (docs/ARCHITECTURE.md, "Pinned channel").
///
/// Every request opens a TLS connection verified by `ChannelVerifier` (the chain, the host name,
/// the policy's pins; a host no pattern names refused before connecting under
/// `unpinnedHosts: deny`), speaks HTTP/2 when the server offers it (ALPN `h2`) and HTTP/1.1
/// otherwise, and closes it after the response. Connecting, the handshake and the response each
/// have a timeout, the response body a size limit; every failure is a `SecureChannelError`.
///
/// With a `ChannelGate` (as `CordonApp.secureChannel()` gives it), the channel obeys the
/// container: no request while the app's key is unavailable, and requests in flight fail with
/// `revoked` the moment it is revoked; while the container is locked, what `network.onLock`
/// says; and after a policy change, requests use the new pins and a request in flight to a server
/// the new policy refuses fails with `revoked` at once.
///
/// ```swift
/// let channel = try await app.secureChannel()
/// let response = try await channel.request("GET", url: "https://api.example.com/v1/items")
/// guard response.status == 200 else { … }
/// ```
public final class SecureChannel: Sendable {
    /// Limits and test hooks.
    public struct Configuration: Sendable {
        /// The longest wait for the TCP connection.
        public var connectTimeout: Duration
        /// The longest wait for the TLS handshake.
        public var handshakeTimeout: Duration
        /// The longest wait from sending the request to the end of the response.
        public var responseTimeout: Duration
        /// The largest response body accepted.
        public var maxResponseBytes: Int
        /// Addresses to connect to instead of resolving a host (as curl's `--resolve`).
        public var addressOverrides: [String: String]
        /// The PEM bundle of the system's roots.
        public var systemRootsPath: String
        /// The validation time of certificates.
        public var now: @Sendable () -> Date

        /// The defaults: 10 s to connect, 10 s for the handshake, 30 s for the response, 16 MiB.
        public init(
            connectTimeout: Duration = .seconds(10), handshakeTimeout: Duration = .seconds(10),
            responseTimeout: Duration = .seconds(30), maxResponseBytes: Int = 16 << 20,
            addressOverrides: [String: String] = [:], systemRootsPath: String = "/etc/ssl/certs/ca-certificates.crt",
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.connectTimeout = connectTimeout
            self.handshakeTimeout = handshakeTimeout
            self.responseTimeout = responseTimeout
            self.maxResponseBytes = maxResponseBytes
            self.addressOverrides = addressOverrides
            self.systemRootsPath = systemRootsPath
            self.now = now
        }
    }

    /// A complete response.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields in order (HTTP/2 names are lower case).
        public var headers: [(name: String, value: String)]
        /// The body.
        public var body: [UInt8]
        /// `HTTP/1.1` (or `HTTP/1.0`) or `HTTP/2`.
        public var httpVersion: String

        /// The first value of the header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// The policy enforced now: the one the channel was made with until its gate applies another
    /// (`ChannelGate.apply`, on `PolicyDidChange`), then that one.
    public var policy: NetworkPolicy { current.withLock { $0.policy } }
    /// The limits in force.
    public let configuration: Configuration
    /// The app's key state, when the channel follows one.
    public let gate: ChannelGate?
    private let current: Locked<(policy: NetworkPolicy, connector: ChannelConnector, generation: Int)>

    /// A channel enforcing `policy`; with `gate`, it follows the app's key, lock and policy
    /// changes (`gate` is told `policy` when it has none yet).
    public init(policy: NetworkPolicy, configuration: Configuration = Configuration(), gate: ChannelGate? = nil)
        throws(SecureChannelError)
    {
        self.configuration = configuration
        self.gate = gate
        let connector = try Self.connector(policy, configuration)
        self.current = Locked((policy, connector, gate?.policyGeneration ?? 0))
    }

    private static func connector(_ policy: NetworkPolicy, _ configuration: Configuration) throws(SecureChannelError)
        -> ChannelConnector
    {
        let verifier = ChannelVerifier(
            policy: policy, systemRootsPath: configuration.systemRootsPath, now: configuration.now)
        return try ChannelConnector(
            verifier: verifier, alpn: ["h2", "http/1.1"], connectTimeout: configuration.connectTimeout,
            handshakeTimeout: configuration.handshakeTimeout, addressOverrides: configuration.addressOverrides)
    }

    /// The connector of the policy in force: rebuilt once when the gate has applied a newer one.
    private func currentConnector() throws(SecureChannelError) -> ChannelConnector {
        guard let gate, let policy = gate.policy else { return current.withLock { $0.connector } }
        let generation = gate.policyGeneration
        if let connector = current.withLock({ $0.generation == generation ? $0.connector : nil }) { return connector }
        let connector = try Self.connector(policy, configuration)
        current.withLock { $0 = (policy, connector, generation) }
        return connector
    }

    /// Sends `method` `url` with `headers` and `body` and returns the whole response.
    public func request(
        _ method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) async throws(SecureChannelError) -> Response {
        let target = try RequestTarget(url: url)
        try await gate?.admit()
        let connector = try currentConnector()
        let connection = try await connector.connectVerified(host: target.host, port: target.port)
        let (channel, negotiated) = (connection.channel, connection.negotiatedProtocol)
        defer { channel.close(promise: nil) }
        let response = channel.eventLoop.makePromise(of: Response.self)
        var gateId: Int?
        if let gate {
            // Revoked since `admit`: not one byte of the request leaves.
            do {
                gateId = try gate.open(policed: connection.policed(configuration)) { error in
                    response.fail(error)
                    channel.close(promise: nil)
                }
            } catch {
                response.fail(error)
                throw error
            }
        }
        defer { if let gateId { gate?.close(gateId) } }
        let seconds = ChannelConnector.seconds(configuration.responseTimeout)
        let timer = channel.eventLoop.scheduleTask(in: ChannelConnector.timeAmount(configuration.responseTimeout)) {
            response.fail(SecureChannelError.timedOut(host: target.host, stage: .response, seconds: seconds))
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        let head = target.head(method: method, headers: headers, bodyLength: body.count, http2: negotiated == "h2")
        let exchange = HTTPExchange(
            host: target.host, head: head, body: body, limit: configuration.maxResponseBytes, promise: response)
        if negotiated == "h2" {
            Self.startHTTP2(on: channel, exchange: exchange)
        } else {
            channel.eventLoop.execute {
                do {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(HTTPResponseCollector(exchange))
                    ChannelConnector.release(channel)
                } catch {
                    response.fail(SecureChannelError.malformedResponse(host: target.host, reason: "\(error)"))
                }
            }
        }
        do { return try await response.futureResult.get() } catch {
            throw (error as? SecureChannelError) ?? .malformedResponse(host: target.host, reason: "\(error)")
        }
    }

    private static func startHTTP2(on channel: any Channel, exchange: HTTPExchange) {
        channel.configureHTTP2Pipeline(mode: .client, inboundStreamInitializer: nil).whenComplete { result in
            switch result {
            case .failure(let error):
                exchange.promise.fail(SecureChannelError.malformedResponse(host: exchange.host, reason: "\(error)"))
            case .success(let multiplexer):
                // The server's SETTINGS, held since the handshake, reach the HTTP/2 handler now.
                ChannelConnector.release(channel)
                let stream = channel.eventLoop.makePromise(of: (any Channel).self)
                multiplexer.createStreamChannel(promise: stream) { streamChannel in
                    streamChannel.eventLoop.makeCompletedFuture {
                        try streamChannel.pipeline.syncOperations.addHandlers([
                            HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https),
                            HTTPResponseCollector(exchange, http2: true),
                        ])
                    }
                }
                stream.futureResult.whenFailure { error in
                    exchange.promise.fail(
                        SecureChannelError.malformedResponse(host: exchange.host, reason: "HTTP/2: \(error)"))
                }
            }
        }
    }
}
