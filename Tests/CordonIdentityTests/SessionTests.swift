import CordonIdentity
import Testing

@Suite("Sessions, offline limits and endpoints")
struct SessionTests {
    func session(refresh: String? = "RT") -> IdentitySession {
        IdentitySession(
            provider: "corp", domain: "corp.example",
            tokens: TokenSet(
                accessToken: "AT", tokenType: "Bearer", expiresAt: 3600, refreshToken: refresh, scope: nil, idToken: nil
            ),
            signedInAt: 0, confirmedAt: 0)
    }

    @Test("valid, then refresh due within the margin; without a refresh token locally authenticated")
    func expiry() {
        let none = OfflineLimits(graceMinutes: nil, wipeDays: nil)
        #expect(session().status(at: 3539, limits: none) == .valid)
        #expect(session().status(at: 3540, limits: none) == .refreshDue)
        #expect(session().status(at: 1_000_000, limits: none) == .refreshDue)
        #expect(session(refresh: nil).status(at: 1_000_000, limits: none) == .locallyAuthenticated)
    }

    @Test("offline limits count from the last confirmation: blocked after the grace, wipe after the days")
    func offlineLimits() {
        let limits = OfflineLimits(graceMinutes: 120, wipeDays: 2)
        #expect(session().status(at: 7199, limits: limits) == .refreshDue)
        #expect(session().status(at: 7200, limits: limits) == .blocked)
        #expect(session().status(at: 172_800, limits: limits) == .wipe)
        let renewed = session().refreshed(
            with: TokenSet(
                accessToken: "AT2", tokenType: "Bearer", expiresAt: 180_000, refreshToken: nil, scope: nil, idToken: nil
            ),
            at: 172_000)
        #expect(renewed.status(at: 172_800, limits: limits) == .valid)
        #expect(renewed.tokens.refreshToken == "RT")
    }

    @Test("endpoints: https anywhere, http only on loopback, no user information or fragment")
    func endpoints() {
        #expect(EndpointRule.problem("https://idp.example/token") == nil)
        #expect(EndpointRule.problem("http://127.0.0.1:9000/token") == nil)
        #expect(EndpointRule.problem("http://[::1]:9000/token") == nil)
        #expect(EndpointRule.problem("http://localhost/token") == nil)
        #expect(EndpointRule.problem("http://idp.example/token") != nil)
        #expect(EndpointRule.problem("http://127.0.0.1.evil.example/token") != nil)
        #expect(EndpointRule.problem("https://user:pw@idp.example/token") != nil)
        #expect(EndpointRule.problem("https://idp.example/token#x") != nil)
        #expect(EndpointRule.problem("ftp://idp.example/token") != nil)
        #expect(EndpointRule.problem("/token") != nil)
        #expect(EndpointRule.sameOrigin("https://a.example/x", "https://A.example:443/y"))
        #expect(!EndpointRule.sameOrigin("https://a.example/x", "http://a.example/x"))
    }

    @Test("a provider with an insecure endpoint or without its flow's endpoint is refused")
    func providerValidation() throws {
        try Fixtures.provider().validate()
        var insecure = Fixtures.provider()
        insecure.tokenEndpoint = "http://idp.example/token"
        #expect(throws: IdentityError.self) { try insecure.validate() }
        var noDevice = Fixtures.provider()
        noDevice.deviceAuthorizationEndpoint = nil
        #expect(throws: IdentityError.self) { try noDevice.validate() }
    }

    @Test("form encoding round-trips reserved characters")
    func form() {
        let fields = [FormField("a b", "x&y=z/é"), FormField("c", "")]
        #expect(FormEncoding.encode(fields) == "a%20b=x%26y%3Dz%2F%C3%A9&c=")
        #expect(FormEncoding.decode(FormEncoding.encode(fields)) == fields)
        #expect(FormEncoding.decode("a=%ZZ") == nil)
    }
}
