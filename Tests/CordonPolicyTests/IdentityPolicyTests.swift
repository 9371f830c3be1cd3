import Testing

@testable import CordonPolicy

@Suite("The identity section")
struct IdentityPolicyTests {
    typealias Support = ParserTestSupport
    typealias Identity = PolicyKeys.Identity

    static func document(_ identity: String) -> String {
        #"{"schema": "cordon.policy.v1", "identity": \#(identity)}"#
    }

    static let valid = document(
        #"""
        {"providers": [{"name": "corp", "issuer": "https://idp.example",
                        "endpoints": {"deviceAuthorization": "https://idp.example/device", "token": "https://idp.example/token",
                                      "revocation": "https://idp.example/revoke", "jwks": "https://idp.example/jwks"},
                        "clientId": "cordon", "scopes": ["openid", "offline_access"], "flow": "device"},
                       {"name": "local", "endpoints": {"authorization": "http://127.0.0.1:9000/authorize",
                                                       "token": "http://127.0.0.1:9000/token"},
                        "clientId": "cordon", "flow": "authorizationCode"}],
         "cpaProviders": [{"name": "bbc", "baseURL": "https://ap.example/cpa", "domains": ["tv.example"]},
                          {"name": "rts", "baseURL": "https://rts.example", "domains": ["rts.example"], "mode": "client"}],
         "domains": [{"domain": "corp.example", "provider": "corp"}],
         "accessGroups": [{"name": "office", "apps": ["com.example.mail", "com.example.notes"], "domains": ["corp.example"]}],
         "offlineGraceMinutes": 720, "offlineWipeDays": 30}
        """#)

    @Test("a full identity section parses into providers, domains, groups and limits")
    func parses() throws {
        let document = try Support.parse(Self.valid).get()
        let policy = EffectivePolicy(document: document, source: PolicySource(path: "test.json", origin: .admin))
        let settings = policy.base
        let providers = settings[Identity.providers].value
        #expect(providers.map(\.name) == ["corp", "local"])
        #expect(providers[0].issuer == "https://idp.example")
        #expect(providers[0].revocationEndpoint == "https://idp.example/revoke")
        #expect(providers[0].scopes == ["openid", "offline_access"])
        #expect(providers[1].flow == .authorizationCode)
        #expect(providers[1].tokenEndpoint == "http://127.0.0.1:9000/token")
        #expect(
            settings[Identity.cpaProviders].value == [
                CPAProviderEntry(name: "bbc", baseURL: "https://ap.example/cpa", domains: ["tv.example"], mode: .user),
                CPAProviderEntry(name: "rts", baseURL: "https://rts.example", domains: ["rts.example"], mode: .client),
            ])
        #expect(settings[Identity.cpaProviders].value[1].listElementJSON.contains(#""mode": "client""#))
        #expect(!settings[Identity.cpaProviders].value[0].listElementJSON.contains("mode"))
        #expect(settings[Identity.domains].value == [IdentityDomainEntry(domain: "corp.example", provider: "corp")])
        #expect(settings[Identity.accessGroups].value.first?.apps == ["com.example.mail", "com.example.notes"])
        #expect(settings[Identity.offlineGraceMinutes].value == 720)
        #expect(settings[Identity.offlineWipeDays].value == 30)
    }

    @Test(
        "bad endpoints are refused with the JSON pointer of the value",
        arguments: [
            ("http://idp.example/token", "/identity/providers/0/endpoints/token"),
            ("https://user@idp.example/token", "/identity/providers/0/endpoints/token"),
            ("https://idp.example/token#frag", "/identity/providers/0/endpoints/token"),
            ("http://127.0.0.1.evil.example/token", "/identity/providers/0/endpoints/token"),
            ("ftp://idp.example/token", "/identity/providers/0/endpoints/token"),
            ("https://idp.example:99999/token", "/identity/providers/0/endpoints/token"),
        ])
    func badEndpoint(url: String, pointer: String) {
        let text = Self.document(
            #"{"providers": [{"name": "corp", "endpoints": {"deviceAuthorization": "https://idp.example/d", "token": "\#(url)"}, "clientId": "c", "flow": "device"}]}"#
        )
        let diagnostics = Support.diagnostics(text)
        #expect(diagnostics.map(\.pointer) == [pointer], "\(diagnostics)")
        #expect(diagnostics.first?.message.contains("https URL") == true)
    }

    @Test("loopback http is allowed on 127.0.0.0/8, [::1] and localhost")
    func loopback() {
        for host in ["127.0.0.1:8080", "127.1.2.3", "[::1]:9000", "localhost"] {
            #expect(IdentityRules.isEndpoint("http://\(host)/token"), "\(host)")
        }
        #expect(!IdentityRules.isEndpoint("http://10.0.0.1/token"))
        #expect(!IdentityRules.isEndpoint("http://[::2]/token"))
    }

    @Test("a flow without its endpoint, a bad name, domain, scope or app id: each reported where it is")
    func badEntries() {
        let noDevice = Support.diagnostics(
            Self.document(
                #"{"providers": [{"name": "corp", "endpoints": {"token": "https://i.example/t"}, "clientId": "c", "flow": "device"}]}"#
            ))
        #expect(noDevice.map(\.pointer) == ["/identity/providers/0/endpoints"])
        let many = Support.diagnostics(
            Self.document(
                #"""
                {"providers": [{"name": "Corp!", "endpoints": {"authorization": "https://i.example/a", "token": "https://i.example/t"},
                                "clientId": "c", "scopes": ["a b"], "flow": "authorizationCode"}],
                 "domains": [{"domain": "Corp.Example", "provider": "corp"}],
                 "accessGroups": [{"name": "g", "apps": ["notes"], "domains": []}],
                 "cpaProviders": [{"name": "x", "baseURL": "https://a.example"}]}
                """#))
        #expect(
            Set(many.map(\.pointer)) == [
                "/identity/providers/0/name", "/identity/providers/0/scopes/0", "/identity/domains/0/domain",
                "/identity/accessGroups/0/apps/0", "/identity/accessGroups/0/domains", "/identity/cpaProviders/0",
            ], "\(many)")
        let unknown = Support.diagnostics(
            Self.document(
                #"{"providers": [{"name": "corp", "endpoints": {"token": "https://i.example/t", "device": "https://i.example/d"}, "clientId": "c", "flow": "device"}]}"#
            ))
        #expect(unknown.contains { $0.pointer == "/identity/providers/0/endpoints/device" })
        let keysWithoutIssuer = Support.diagnostics(
            Self.document(
                #"{"providers": [{"name": "corp", "endpoints": {"token": "https://i.example/t", "deviceAuthorization": "https://i.example/d", "jwks": "https://i.example/k"}, "clientId": "c", "flow": "device"}]}"#
            ))
        #expect(keysWithoutIssuer.map(\.pointer) == ["/identity/providers/0/endpoints"], "\(keysWithoutIssuer)")
        #expect(keysWithoutIssuer.first?.message.contains("issuer") == true)
        let badMode = Support.diagnostics(
            Self.document(
                #"{"cpaProviders": [{"name": "x", "baseURL": "https://a.example", "domains": ["a.example"], "mode": "anonymous"}]}"#
            ))
        #expect(badMode.map(\.pointer) == ["/identity/cpaProviders/0/mode"], "\(badMode)")
    }

    @Test("with an issuer the endpoints are optional (discovered); without, the token endpoint is required")
    func discovery() throws {
        let issuerOnly = try Support.parse(
            Self.document(
                #"{"providers": [{"name": "corp", "issuer": "https://login.example.com/tenant", "clientId": "c", "flow": "device"}]}"#
            )
        ).get()
        let entry = try #require(
            EffectivePolicy(document: issuerOnly, source: PolicySource(path: "t.json", origin: .admin))
                .base[Identity.providers].value.first)
        #expect(entry.issuer == "https://login.example.com/tenant")
        #expect(entry.tokenEndpoint == nil && entry.deviceAuthorizationEndpoint == nil && entry.jwksURI == nil)
        #expect(!entry.listElementJSON.contains("endpoints"))
        // An explicit endpoint with an issuer: kept (it overrides the discovered one); the flow's
        // endpoint and the token endpoint may both be left to discovery.
        let partial = try Support.parse(
            Self.document(
                #"{"providers": [{"name": "corp", "issuer": "https://idp.example", "endpoints": {"revocation": "https://idp.example/r"}, "clientId": "c", "flow": "authorizationCode"}]}"#
            )
        ).get()
        let kept = try #require(
            EffectivePolicy(document: partial, source: PolicySource(path: "t.json", origin: .admin))
                .base[Identity.providers].value.first)
        #expect(kept.revocationEndpoint == "https://idp.example/r" && kept.tokenEndpoint == nil)
        #expect(kept.listElementJSON.contains(#""endpoints": {"revocation": "https://idp.example/r"}"#))
        // Without an issuer nothing is discovered: no endpoints, or no token endpoint, is an error there.
        let noEndpoints = Support.diagnostics(
            Self.document(#"{"providers": [{"name": "corp", "clientId": "c", "flow": "device"}]}"#))
        #expect(noEndpoints.map(\.pointer) == ["/identity/providers/0"], "\(noEndpoints)")
        #expect(noEndpoints.first?.message.contains("\"endpoints\"") == true)
        let noToken = Support.diagnostics(
            Self.document(
                #"{"providers": [{"name": "corp", "endpoints": {"deviceAuthorization": "https://i.example/d"}, "clientId": "c", "flow": "device"}]}"#
            ))
        #expect(noToken.map(\.pointer) == ["/identity/providers/0/endpoints"], "\(noToken)")
        #expect(noToken.first?.message.contains("\"token\"") == true)
        // A bad issuer is reported at its pointer, and nothing is discovered from it.
        let badIssuer = Support.diagnostics(
            Self.document(
                #"{"providers": [{"name": "corp", "issuer": "http://idp.example", "clientId": "c", "flow": "device"}]}"#
            ))
        #expect(badIssuer.map(\.pointer) == ["/identity/providers/0/issuer"], "\(badIssuer)")
    }

    @Test("a user policy may tighten the offline limits but not add providers, domains or groups")
    func userFiles() {
        #expect(Support.diagnostics(Self.document(#"{"offlineGraceMinutes": 5}"#), origin: .user).isEmpty)
        let refused = Support.diagnostics(Self.valid, origin: .user)
        #expect(
            Set(refused.map(\.pointer)) == [
                "/identity/providers", "/identity/cpaProviders", "/identity/domains", "/identity/accessGroups",
            ], "\(refused)")
    }

    @Test("identity cannot be set per app; the smallest offline limit wins across files")
    func scopeAndMerge() throws {
        let override = Support.diagnostics(
            #"{"schema": "cordon.policy.v1", "overrides": [{"apps": ["a.b"], "identity": {"offlineWipeDays": 1}}]}"#)
        #expect(override.first?.message.contains("sign-in sessions belong to the whole container") == true)
        let first = try Support.parse(Self.document(#"{"offlineGraceMinutes": 600, "offlineWipeDays": 3}"#)).get()
        let second = try Support.parse(Self.document(#"{"offlineGraceMinutes": 60}"#)).get()
        let merged = EffectivePolicy.merge([
            (first, PolicySource(path: "a.json", origin: .admin)),
            (second, PolicySource(path: "b.json", origin: .admin)),
        ])
        #expect(merged.base[Identity.offlineGraceMinutes].value == 60)
        #expect(merged.base[Identity.offlineWipeDays].value == 3)
    }
}
