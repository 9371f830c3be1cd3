import CordonIdentity
import Foundation
import Testing

/// `OpenIDDiscovery` (OpenID Connect Discovery 1.0, docs/ARCHITECTURE.md "Identity"): the document
/// the local authlib provider serves at `/.well-known/openid-configuration`, good and with each of
/// its admin switches, and documents no provider would serve; every refusal is a typed error at
/// step `discovery` naming the member by its JSON pointer.
@Suite("OpenID Connect Discovery documents", .serialized)
struct OpenIDDiscoveryTests {
    static let nothingGiven = ProviderEndpoints()

    func endpoints(
        _ body: [UInt8], status: Int = 200, issuer: String, flow: SignInFlow = .device,
        explicit: ProviderEndpoints = nothingGiven
    ) throws(IdentityError) -> ProviderEndpoints {
        try OpenIDDiscovery.endpoints(
            status: status, body: body, provider: "local", issuer: issuer, flow: flow, explicit: explicit)
    }

    func document(_ peer: LocalProvider) throws -> [UInt8] {
        let url = OpenIDDiscovery.configurationURL(issuer: peer.base)
        #expect(url == peer.base + "/.well-known/openid-configuration")
        let (status, body) = try peer.get(String(url.dropFirst(peer.base.count)))
        #expect(status == 200)
        return body
    }

    @Test("the document's URL keeps the issuer's path and drops a terminating slash (§4.1)")
    func configurationURL() {
        #expect(
            OpenIDDiscovery.configurationURL(issuer: "https://login.example.com/tenant/v2.0")
                == "https://login.example.com/tenant/v2.0/.well-known/openid-configuration")
        #expect(
            OpenIDDiscovery.configurationURL(issuer: "https://login.example.com/")
                == "https://login.example.com/.well-known/openid-configuration")
        #expect(
            OpenIDDiscovery.configurationURL(issuer: "https://login.example.com")
                == "https://login.example.com/.well-known/openid-configuration")
    }

    @Test("the provider's document gives every endpoint; an explicit one overrides it when merged")
    func goodDocument() throws {
        let peer = try LocalProvider()
        let found = try endpoints(try document(peer), issuer: peer.base)
        #expect(
            found
                == ProviderEndpoints(
                    deviceAuthorization: peer.base + "/device_authorization", authorization: peer.base + "/authorize",
                    token: peer.base + "/token", revocation: peer.base + "/revoke", jwks: peer.base + "/jwks"))
        let explicit = ProviderEndpoints(token: "https://proxy.example/token")
        let merged = explicit.filled(from: found)
        #expect(merged.token == "https://proxy.example/token")
        #expect(merged.jwks == peer.base + "/jwks")
        #expect(merged.flowEndpoint(.authorizationCode) == peer.base + "/authorize")
        // Nothing is needed from a document when the policy gives the token, flow and JWKS endpoints.
        #expect(
            !OpenIDDiscovery.isNeeded(
                ProviderEndpoints(deviceAuthorization: "https://i.example/d", token: "https://i.example/t", jwks: "x"),
                flow: .device))
        #expect(OpenIDDiscovery.isNeeded(explicit, flow: .device))
    }

    @Test("the provider's bad documents: another issuer, not JSON, an http endpoint, no token endpoint")
    func badDocumentsFromThePeer() async throws {
        let peer = try LocalProvider()
        let cases: [(String, IdentityError)] = [
            (
                "discovery_wrong_issuer",
                .issuerMismatch(provider: "local", expected: peer.base, found: "https://idp.attacker.example")
            ),
            (
                "discovery_malformed",
                .malformedResponse(
                    provider: "local", step: .discovery, reason: "the discovery document is not a JSON object")
            ),
            (
                "discovery_insecure",
                .insecureEndpoint(
                    provider: "local", step: .discovery,
                    reason: "/token_endpoint: http://idp.example/token is not https and its host is not loopback")
            ),
            (
                "discovery_no_token",
                .malformedResponse(
                    provider: "local", step: .discovery,
                    reason: "/token_endpoint is missing and the policy does not give the endpoint")
            ),
        ]
        for (flag, expected) in cases {
            try await peer.admin("/admin/config", [FormField(flag, "1")])
            let body = try document(peer)
            #expect(throws: expected, "\(flag)") { try endpoints(body, issuer: peer.base) }
            try await peer.admin("/admin/config", [FormField(flag, "0")])
        }
        // The mix-up defence names both issuers and the step.
        let mismatch = IdentityError.issuerMismatch(provider: "local", expected: peer.base, found: "https://x.example")
        #expect(mismatch.step == .discovery && mismatch.provider == "local")
        #expect(mismatch.description.contains("local: discovery: the document's /issuer is \"https://x.example\""))
        // A token endpoint the policy gives makes the document's absence of one acceptable.
        try await peer.admin("/admin/config", [FormField("discovery_no_token", "1")])
        let found = try endpoints(
            try document(peer), issuer: peer.base, explicit: ProviderEndpoints(token: peer.base + "/token"))
        #expect(found.token == nil && found.deviceAuthorization == peer.base + "/device_authorization")
    }

    @Test("documents no provider should serve: each refused at its member's JSON pointer")
    func badDocuments() {
        let issuer = "https://idp.example"
        let good: [String: Any] = [
            "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "device_authorization_endpoint": issuer + "/device", "jwks_uri": issuer + "/jwks",
        ]
        func body(_ change: (inout [String: Any]) -> Void) -> [UInt8] {
            var object = good
            change(&object)
            return (try? JSONSerialization.data(withJSONObject: object)).map(Array.init) ?? []
        }
        func reason(_ text: String) -> IdentityError {
            .malformedResponse(provider: "local", step: .discovery, reason: text)
        }
        let cases: [(String, [UInt8], Int, SignInFlow, IdentityError)] = [
            ("an array", Array("[]".utf8), 200, .device, reason("the discovery document is not a JSON object")),
            (
                "over 64 KiB", body { $0["padding"] = String(repeating: "x", count: 65 * 1024) }, 200, .device,
                reason("the discovery document is over 64 KiB")
            ),
            ("no issuer", body { $0["issuer"] = nil }, 200, .device, reason("/issuer is missing")),
            ("a numeric issuer", body { $0["issuer"] = 1 }, 200, .device, reason("/issuer is not a string")),
            (
                "the issuer with a slash", body { $0["issuer"] = issuer + "/" }, 200, .device,
                .issuerMismatch(provider: "local", expected: issuer, found: issuer + "/")
            ),
            (
                "a numeric endpoint", body { $0["jwks_uri"] = 7 }, 200, .device,
                reason("/jwks_uri is not a string")
            ),
            (
                "an endpoint with user information", body { $0["revocation_endpoint"] = "https://u@idp.example/r" },
                200, .device,
                .insecureEndpoint(
                    provider: "local", step: .discovery,
                    reason: "/revocation_endpoint: https://u@idp.example/r holds user information")
            ),
            (
                "no device endpoint for the device flow", body { $0["device_authorization_endpoint"] = nil }, 200,
                .device, reason("/device_authorization_endpoint is missing and the policy does not give the endpoint")
            ),
            (
                "no authorization endpoint for the code flow", body { $0["authorization_endpoint"] = nil }, 200,
                .authorizationCode,
                reason("/authorization_endpoint is missing and the policy does not give the endpoint")
            ),
            (
                "no JWKS", body { $0["jwks_uri"] = nil }, 200, .device,
                reason("/jwks_uri is missing and the policy does not give the endpoint")
            ),
            ("HTTP 404", body { _ in }, 404, .device, reason("the discovery document answered HTTP 404")),
            (
                "HTTP 503", Array("<html/>".utf8), 503, .device,
                .serverError(provider: "local", step: .discovery, status: 503)
            ),
        ]
        for (name, document, status, flow, expected) in cases {
            #expect(throws: expected, "\(name)") {
                try OpenIDDiscovery.endpoints(
                    status: status, body: document, provider: "local", issuer: issuer, flow: flow,
                    explicit: Self.nothingGiven)
            }
        }
        // No endpoint needed by the code flow is missing: the device endpoint may be absent then.
        #expect(
            (try? OpenIDDiscovery.endpoints(
                status: 200, body: body { $0["device_authorization_endpoint"] = nil }, provider: "local",
                issuer: issuer, flow: .authorizationCode, explicit: Self.nothingGiven))?.authorization
                == issuer + "/authorize")
    }
}
