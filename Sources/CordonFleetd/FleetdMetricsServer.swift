import NIOCore
import NIOHTTP1
import NIOPosix

/// fleetd's metrics endpoint (`metrics.listen` in fleet.json, a loopback address): `GET /metrics`
/// answers the Prometheus text format, anything else 404. Nothing else is served, nothing is read
/// from a request beyond its head.
public final class FleetdMetricsServer: Sendable {
    private let channel: any Channel

    private init(channel: any Channel) { self.channel = channel }

    /// The port bound (the one asked for, or the kernel's pick for port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    /// Binds `host`:`port` and serves `metrics` until `stop()`.
    public static func start(
        host: String, port: Int, metrics: FleetdMetrics,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(FleetdError) -> FleetdMetricsServer {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHandler(metrics: metrics))
                }
            }
        do {
            return FleetdMetricsServer(channel: try await bootstrap.bind(host: host, port: port).get())
        } catch {
            throw FleetdError(
                "cannot listen for metrics on \(host):\(port): \(error)",
                hint: "choose a free port in /metrics/listen of fleet.json, or remove /metrics")
        }
    }

    /// Closes the listening socket.
    public func stop() async {
        try? await channel.close()
    }
}

/// Answers one request at a time on a connection: the head decides, the body is ignored.
private final class MetricsHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: FleetdMetrics

    init(metrics: FleetdMetrics) { self.metrics = metrics }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let request) = unwrapInboundIn(data) else { return }
        let found = request.method == .GET && request.uri.split(separator: "?").first == "/metrics"
        let body = found ? metrics.emit() : Array("not found\n".utf8)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain")
        headers.add(name: "Content-Length", value: "\(body.count)")
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: found ? .ok : .notFound, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let keepAlive = request.isKeepAlive
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
