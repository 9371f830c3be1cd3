import AsyncHTTPClient
import CordonFleet
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Fetches the repository's files over HTTPS (AsyncHTTPClient). The transport is untrusted — every
/// byte is verified by `TUFRefresh` — but it is bounded: each read stops at the length the metadata
/// promised (or the role's cap), nothing is decompressed, no redirect is followed, and each request
/// has a deadline.
public final class RepositoryClient: Sendable {
    private let client: HTTPClient
    /// The repository's base URL, ending in `/`.
    public let base: String
    private let timeout = TimeAmount.seconds(30)

    /// A client of the repository at `base`; `connections` is how many HTTP/1.1 connections it keeps
    /// to the host at most (fleetd needs one; the fleet simulation shares a client among machines).
    public init(base: String, caFile: String?, connections: Int = 8) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.decompression = .disabled
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.base = base.hasSuffix("/") ? base : base + "/"
    }

    /// GETs `path` under the base, reading at most `maximumLength` bytes; with `etag`, conditionally.
    /// Returns the reply for `TUFRefresh` and the response's ETag.
    public func fetch(_ path: String, maximumLength: Int, etag: String? = nil) async -> (
        reply: TUFRefresh.Reply, etag: String?
    ) {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "User-Agent", value: "cordon-fleetd")
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        do {
            let response = try await client.execute(request, timeout: timeout)
            let tag = response.headers.first(name: "ETag")
            switch response.status {
            case .ok:
                do {
                    let body = try await response.body.collect(upTo: maximumLength)
                    return (.data(Array(body.readableBytesView)), tag)
                } catch is NIOTooManyBytesError {
                    return (.tooLong, nil)
                }
            case .notModified:
                return (.notModified, tag)
            case .notFound, .forbidden:
                // Object stores answer 403 for a missing key.
                return (.notFound, nil)
            default:
                return (.failed("\(base + path): HTTP \(response.status.code)"), nil)
            }
        } catch {
            return (.failed("\(base + path): \(Self.describe(error))"), nil)
        }
    }

    /// PUTs `bytes` to `url` (a device report).
    public func put(_ bytes: [UInt8], to url: String) async throws(FleetdError) {
        var request = HTTPClientRequest(url: url)
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "cordon-fleetd")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        do {
            let response = try await client.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(Int(response.status.code)) else {
                throw FleetdError(
                    "PUT \(url): HTTP \(response.status.code)", hint: "the report endpoint must accept PUT")
            }
        } catch let error as FleetdError {
            throw error
        } catch {
            throw FleetdError("PUT \(url): \(Self.describe(error))", hint: "check reportURL in the fleet settings")
        }
    }

    public func shutdown() async { try? await client.shutdown() }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOSSLError {
            let text = String(describing: error)
            if text.contains("CERTIFICATE_VERIFY_FAILED") { return "the server's certificate is not trusted" }
            return "TLS failed: \(text.prefix(200))"
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .deadlineExceeded: return "the server did not answer in time"
            case .connectTimeout: return "the connection timed out"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: return "\(error)"
            }
        }
        return String(describing: error).prefix(200).description
    }
}
