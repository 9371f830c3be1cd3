import AsyncHTTPClient
import CordonProtocol
import CordonTokens
import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Carries a `CTKIPClient` exchange over HTTPS (docs/ARCHITECTURE.md, "Tokens"): the server's
/// certificate is validated against the system trust store, or the CA file test mode names
/// (`cordond --ctkip-ca`); `insecure` skips validation (the caller checks the policy and audits).
/// Each answer is bounded in size and time; no redirect is followed. Errors name the step and
/// the server, never the activation code or the seed.
struct CTKIPTransport: Sendable {
    /// A PEM file of CA certificates to trust instead of the system's (test mode only).
    var caFile: String?
    /// The largest answer read (RSA's are a few KiB).
    var maximumResponse = 64 * 1024
    /// The time one request may take, connection and answer included.
    var requestTimeout = TimeAmount.seconds(15)

    /// Runs the exchange against `provisioning.url` and returns the token, its MAC checked.
    func provision(_ provisioning: CTKIPProvisioning, insecure: Bool) async throws(CordonError) -> SecurIDToken {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        if insecure { tls.certificateVerification = .none }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: requestTimeout))
        configuration.httpVersion = .http1Only
        // As for identity providers (IdentityTransport): a refused connection is the answer at
        // once, not after the pool's retries until the 10 s connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let result: Result<SecurIDToken, CordonError>
        do {
            result = .success(try await exchange(provisioning, client: client))
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        return try result.get()
    }

    private func exchange(_ provisioning: CTKIPProvisioning, client: HTTPClient) async throws(CordonError)
        -> SecurIDToken
    {
        var machine = CTKIPClient(activationCode: provisioning.activationCode) { count in
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let hello = machine.clientHello()
        let serverHello = try await post(hello, action: machine.soapAction, step: .clientHello, provisioning, client)
        let nonce = try ctkip(provisioning) { () throws(CTKIPError) in try machine.clientNonce(answering: serverHello) }
        let finished = try await post(nonce, action: machine.soapAction, step: .clientNonce, provisioning, client)
        return try ctkip(provisioning) { () throws(CTKIPError) in try machine.finish(finished) }
    }

    /// POSTs one request; the answer's body, or an error naming `step` (the request being sent).
    private func post(
        _ body: [UInt8], action: String, step: CTKIPStep, _ provisioning: CTKIPProvisioning, _ client: HTTPClient
    ) async throws(CordonError) -> [UInt8] {
        var request = HTTPClientRequest(url: provisioning.url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: provisioning.activationCode)
        request.headers.add(name: "SOAPAction", value: action)
        request.headers.add(name: "Content-Type", value: "application/vnd.otps.ct-kip")
        request.headers.add(name: "User-Agent", value: "HTTPPOST")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: requestTimeout)
            guard response.status == .ok else {
                throw failure(provisioning, step, "the server answered HTTP \(response.status.code)")
            }
            let bytes = try await response.body.collect(upTo: maximumResponse)
            return Array(bytes.readableBytesView)
        } catch let error as CordonError {
            throw error
        } catch {
            throw failure(
                provisioning, step,
                Self.describe(error, limit: maximumResponse, url: provisioning.url, answer: requestTimeout))
        }
    }

    private func ctkip<T>(_ provisioning: CTKIPProvisioning, _ body: () throws(CTKIPError) -> T) throws(CordonError)
        -> T
    {
        do {
            return try body()
        } catch {
            throw failure(provisioning, error.step, error.reason)
        }
    }

    private func failure(_ provisioning: CTKIPProvisioning, _ step: CTKIPStep, _ reason: String) -> CordonError {
        .ctkipFailed(server: provisioning.server, step: step.rawValue, reason: reason)
    }

    /// A transport error in words: the certificate problem, the timeout, the oversize answer, a
    /// refused or reset connection (as identity requests name them, `IdentityTransportFailure`).
    static func describe(_ error: any Error, limit: Int, url: String, answer: TimeAmount) -> String {
        if error is NIOConnectionError || error is IOError {
            return IdentityTransportFailure.describe(error, url: url, connect: .seconds(10), answer: answer)
        }
        if let error = error as? NIOSSLError {
            let text = String(describing: error)
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED: self-signed, "
                    + "unknown issuer or expired)"
            }
            return "TLS failed: \(text.prefix(300))"
        }
        if let error = error as? NIOSSLExtraError { return "TLS failed: \(String(describing: error).prefix(300))" }
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .deadlineExceeded: return "the server did not answer in time"
            case .connectTimeout: return "the connection timed out"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: return "HTTP failed: \(String(describing: error).prefix(300))"
            }
        }
        if error is NIOTooManyBytesError { return "the answer is larger than \(limit) bytes" }
        return "the connection failed: \(String(describing: error).prefix(300))"
    }
}
