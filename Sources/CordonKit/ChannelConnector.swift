import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Opens TLS connections that `ChannelVerifier` verified (docs/ARCHITECTURE.md, "Pinned
/// channel"): the policy's decision before connecting, the connect and handshake timeouts, and
/// the typed reason of every refusal. `SecureChannel` speaks HTTP over them; `cordon run --tunnel`
/// relays bytes.
public struct ChannelConnector: Sendable {
    /// The verifier (and policy) of every connection.
    public let verifier: ChannelVerifier
    /// The event loops the connections run on.
    public let group: any EventLoopGroup
    /// The longest wait for the TCP connection.
    public let connectTimeout: Duration
    /// The longest wait for the TLS handshake (verification included).
    public let handshakeTimeout: Duration
    /// Addresses to connect to instead of resolving a host (curl's `--resolve`); the host name is
    /// still the one sent (SNI) and verified.
    public let addressOverrides: [String: String]
    private let context: NIOSSLContext

    /// A connector for `verifier`'s policy offering `alpn` (none for a raw tunnel).
    public init(
        verifier: ChannelVerifier, alpn: [String], group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        connectTimeout: Duration = .seconds(10), handshakeTimeout: Duration = .seconds(10),
        addressOverrides: [String: String] = [:]
    ) throws(SecureChannelError) {
        self.verifier = verifier
        self.group = group
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.addressOverrides = addressOverrides
        self.context = try verifier.makeContext(alpn: alpn)
    }

    /// Connects to `host`:`port` and completes a verified handshake; returns the channel (TLS
    /// handler in its pipeline) and the negotiated ALPN protocol. A host the policy refuses is
    /// refused before any connection. With `loop`, the channel runs on it (a relay glues it to a
    /// channel of that loop).
    public func connect(host: String, port: Int, on loop: (any EventLoop)? = nil) async throws(SecureChannelError)
        -> (channel: any Channel, negotiatedProtocol: String?)
    {
        let connection = try await connectVerified(host: host, port: port, on: loop)
        return (connection.channel, connection.negotiatedProtocol)
    }

    /// A connection `connectVerified` opened: the channel, the negotiated ALPN protocol, and what
    /// the server presented (to check it again when the policy changes).
    public struct Connection: Sendable {
        /// The channel (TLS handler in its pipeline).
        public let channel: any Channel
        /// The negotiated ALPN protocol.
        public let negotiatedProtocol: String?
        /// The host connected to.
        public let host: String
        /// The chain the server presented (DER, leaf first).
        public let presented: [[UInt8]]

        /// The check of this connection against a new policy (`ChannelGate.Policed`): the
        /// decision before connecting and the chain's verification, as a new connection would get
        /// them, with these system roots and this validation clock.
        public func policed(systemRootsPath: String, now: @escaping @Sendable () -> Date) -> ChannelGate.Policed {
            let host = host
            let presented = presented
            let recheck: ChannelGate.Recheck = { policy in
                let verifier = ChannelVerifier(policy: policy, systemRootsPath: systemRootsPath, now: now)
                do throws(SecureChannelError) {
                    let governance = try verifier.governance(host: host)
                    _ = try await verifier.verify(host: host, governance: governance, presented: presented)
                    return nil
                } catch {
                    return error
                }
            }
            return (host, recheck)
        }

        /// `policed` with a channel's configuration.
        func policed(_ configuration: SecureChannel.Configuration) -> ChannelGate.Policed {
            policed(systemRootsPath: configuration.systemRootsPath, now: configuration.now)
        }
    }

    /// `connect`, also returning what the server presented.
    public func connectVerified(host: String, port: Int, on loop: (any EventLoop)? = nil)
        async throws(SecureChannelError) -> Connection
    {
        let governance = try verifier.governance(host: host)
        let outcome = VerificationOutcome()
        let loop = loop ?? group.next()
        let handshake = loop.makePromise(of: String?.self)
        let verifier = self.verifier
        let context = self.context
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(Self.timeAmount(connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try verifier.makeHandler(
                        context: context, host: host, governance: governance, outcome: outcome)
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(
                        TLSHandshakeWaiter(promise: handshake, outcome: outcome, host: host),
                        name: TLSHandshakeWaiter.name)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: addressOverrides[host] ?? host, port: port).get()
        } catch let error as SecureChannelError {
            handshake.fail(error)
            throw error
        } catch ChannelError.connectTimeout {
            handshake.fail(ChannelError.ioOnClosedChannel)
            throw .timedOut(host: host, stage: .connect, seconds: Self.seconds(connectTimeout))
        } catch {
            handshake.fail(error)
            throw .connectFailed(host: host, port: port, reason: Self.describe(error))
        }
        let seconds = Self.seconds(handshakeTimeout)
        let timer = loop.scheduleTask(in: Self.timeAmount(handshakeTimeout)) {
            handshake.fail(SecureChannelError.timedOut(host: host, stage: .handshake, seconds: seconds))
            channel.close(promise: nil)
        }
        do {
            let negotiated = try await handshake.futureResult.get()
            timer.cancel()
            return Connection(
                channel: channel, negotiatedProtocol: negotiated, host: host, presented: outcome.presented)
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw (error as? SecureChannelError) ?? .handshakeFailed(host: host, reason: Self.describe(error))
        }
    }

    /// Hands what the server sent since the handshake to the handlers added after `connect`
    /// returned; call on the channel's event loop once they are in place.
    public static func release(_ channel: any Channel) {
        channel.pipeline.syncOperations.removeHandler(name: TLSHandshakeWaiter.name, promise: nil)
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    static func describe(_ error: any Error) -> String {
        if let io = error as? IOError { return io.description }
        return TLSHandshakeWaiter.describe(error)
    }
}
