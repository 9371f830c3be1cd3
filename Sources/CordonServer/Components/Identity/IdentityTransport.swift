import AsyncHTTPClient
import CordonIdentity
import NIOCore

/// Carries the identity broker's requests to a provider with AsyncHTTPClient, as `CTKIPTransport`
/// does for CT-KIP (docs/ARCHITECTURE.md, "Identity"): a POST (form or JSON) or the JWKS GET, certificate validation against
/// the system trust store, no redirect followed, each answer bounded in size and time, a refused
/// or failed connection reported at once (never retried until the connect timeout). Errors name
/// the provider and the step, never a field's value (a code, verifier or token).
struct IdentityTransport: Sendable {
    /// The largest answer read (`TokenResponseParser.maximumBody`).
    var maximumResponse = TokenResponseParser.maximumBody
    /// The time one request may take, connection and answer included.
    var requestTimeout = TimeAmount.seconds(15)
    /// The time a connection may take.
    var connectTimeout = TimeAmount.seconds(10)

    /// POSTs `request` for `provider`; the answer's status and body.
    func post(_ request: ProviderRequest, provider: String) async throws(IdentityError) -> (status: Int, body: [UInt8])
    {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: request.contentType)
        outgoing.headers.add(name: "Accept", value: "application/json")
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        return try await run(outgoing, provider: provider, step: request.step)
    }

    /// GETs `url` for `provider` at `step` (the JWKS), with the same limits as `post`.
    func get(_ url: String, provider: String, step: IdentityStep) async throws(IdentityError)
        -> (status: Int, body: [UInt8])
    {
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .GET
        outgoing.headers.add(name: "Accept", value: "application/json")
        return try await run(outgoing, provider: provider, step: step)
    }

    private func run(_ outgoing: HTTPClientRequest, provider: String, step: IdentityStep) async throws(IdentityError)
        -> (status: Int, body: [UInt8])
    {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: connectTimeout, read: requestTimeout))
        configuration.httpVersion = .http1Only
        // AsyncHTTPClient's pool would retry a failed connection with backoff until the connect
        // timeout, so a refused port took the whole 10 s: the first failure ends the request
        // (the agent keeps its own backoff per provider, docs/components/identity.md). A connect
        // that hangs still ends at `connectTimeout`.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let result: Result<(Int, [UInt8]), IdentityError>
        do {
            result = .success(try await exchange(outgoing, provider: provider, step: step, client: client))
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        return try result.get()
    }

    private func exchange(_ outgoing: HTTPClientRequest, provider: String, step: IdentityStep, client: HTTPClient)
        async throws(IdentityError) -> (Int, [UInt8])
    {
        do {
            let response = try await client.execute(outgoing, timeout: requestTimeout)
            let bytes = try await response.body.collect(upTo: maximumResponse)
            return (Int(response.status.code), Array(bytes.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw .malformedResponse(
                provider: provider, step: step, reason: "the answer is larger than \(maximumResponse) bytes")
        } catch {
            throw .unreachable(
                provider: provider, step: step,
                reason: IdentityTransportFailure.describe(
                    error, url: outgoing.url, connect: connectTimeout, answer: requestTimeout))
        }
    }
}
