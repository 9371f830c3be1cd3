/// What a file may write in the `identity` section's lists: the parser (every problem reported
/// with its JSON pointer) and the JSON Schema, from one declaration each.
extension ValueSyntax where Parsed == [OAuthProviderEntry] {
    static var oauthProviders: Self {
        Self(
            parse: { json, validator in validator.list(json, of: "providers") { validator.oauthProvider($0) } },
            schema: IdentitySchema.array(
                of: IdentitySchema.object(
                    "An OAuth 2.0 / OpenID Connect provider.",
                    [
                        ("name", StringPattern.identityName.schema(description: "The provider's name.")),
                        ("issuer", StringPattern.endpointURL.schema(description: "The OpenID issuer.")),
                        (
                            "endpoints",
                            IdentitySchema.object(
                                "The provider's endpoints.",
                                IdentityPolicyKeys.endpoints.map {
                                    ($0, StringPattern.endpointURL.schema(description: "The \($0) endpoint."))
                                }, required: [])
                        ),
                        (
                            "clientId",
                            StringPattern.clientID.schema(description: "The client id registered for Cordon.")
                        ),
                        (
                            "scopes",
                            IdentitySchema.array(
                                of: StringPattern.scopeToken.schema(description: "A scope."),
                                description: "The scopes asked for (RFC 6749 section 3.3).")
                        ),
                        (
                            "flow",
                            StringPattern.identityFlow.schema(
                                description:
                                    "\"device\" (RFC 8628) or \"authorizationCode\" (PKCE through a loopback redirect)."
                            )
                        ),
                    ], required: ["name", "clientId", "flow"],
                    // Without an issuer nothing is discovered: the token endpoint is required.
                    anyOf: [
                        .object([("required", .array(["issuer"]))]),
                        .object([
                            ("required", .array(["endpoints"])),
                            (
                                "properties",
                                .object([
                                    (
                                        "endpoints",
                                        .object([
                                            ("description", "Without an issuer: the token endpoint is required."),
                                            ("required", .array(["token"])),
                                        ])
                                    )
                                ])
                            ),
                        ]),
                    ])))
    }
}

extension ValueSyntax where Parsed == [CPAProviderEntry] {
    static var cpaProviders: Self {
        Self(
            parse: { json, validator in validator.list(json, of: "CPA providers") { validator.cpaProvider($0) } },
            schema: IdentitySchema.array(
                of: IdentitySchema.object(
                    "A CPA authorization provider.",
                    [
                        ("name", StringPattern.identityName.schema(description: "The provider's name.")),
                        (
                            "baseURL",
                            StringPattern.endpointURL.schema(description: "The authorization provider's base URL.")
                        ),
                        (
                            "domains",
                            IdentitySchema.array(
                                of: StringPattern.domainName.schema(description: "A domain."),
                                description: "The domains the provider serves; at least one.", nonEmpty: true)
                        ),
                        (
                            "mode",
                            StringPattern.cpaMode.schema(
                                description:
                                    "\"user\" (the default: a user token once the user pairs the device with a code) or \"client\" (an anonymous client token)."
                            )
                        ),
                    ], required: ["name", "baseURL", "domains"])))
    }
}

extension ValueSyntax where Parsed == [IdentityDomainEntry] {
    static var identityDomains: Self {
        Self(
            parse: { json, validator in validator.list(json, of: "domains") { validator.identityDomain($0) } },
            schema: IdentitySchema.array(
                of: IdentitySchema.object(
                    "A domain and the provider that signs in for it.",
                    [
                        ("domain", StringPattern.domainName.schema(description: "The domain apps ask tokens for.")),
                        ("provider", StringPattern.identityName.schema(description: "The provider's name.")),
                    ], required: ["domain", "provider"])))
    }
}

extension ValueSyntax where Parsed == [AccessGroupEntry] {
    static var accessGroups: Self {
        Self(
            parse: { json, validator in validator.list(json, of: "access groups") { validator.accessGroup($0) } },
            schema: IdentitySchema.array(
                of: IdentitySchema.object(
                    "An access group: apps that share the tokens of its domains.",
                    [
                        ("name", StringPattern.identityName.schema(description: "The group's name.")),
                        (
                            "apps",
                            .object([
                                ("description", "The managed apps in the group; at least one."), ("type", "array"),
                                ("minItems", .integer(1)), ("items", .reference("appId")),
                            ])
                        ),
                        (
                            "domains",
                            IdentitySchema.array(
                                of: StringPattern.domainName.schema(description: "A domain."),
                                description: "The domains whose tokens the group's apps share; at least one.",
                                nonEmpty: true)
                        ),
                    ], required: ["name", "apps", "domains"])))
    }
}

/// The keys of the `identity` entries.
enum IdentityPolicyKeys {
    static let endpoints = ["deviceAuthorization", "authorization", "token", "revocation", "jwks"]
    static let provider = ["name", "issuer", "endpoints", "clientId", "scopes", "flow"]
}

/// Schema pieces of the `identity` entries.
enum IdentitySchema {
    static func array(of items: SchemaJSON, description: String? = nil, nonEmpty: Bool = false) -> SchemaJSON {
        var members: [(String, SchemaJSON)] = description.map { [("description", .string($0))] } ?? []
        members.append(("type", "array"))
        if nonEmpty { members.append(("minItems", .integer(1))) }
        members.append(("items", items))
        return .object(members)
    }

    static func object(
        _ description: String, _ properties: [(String, SchemaJSON)], required: [String], anyOf: [SchemaJSON] = []
    ) -> SchemaJSON {
        var members: [(String, SchemaJSON)] = [
            ("description", .string(description)), ("type", "object"), ("additionalProperties", .bool(false)),
        ]
        if !required.isEmpty { members.append(("required", .array(required.map(SchemaJSON.string)))) }
        members.append(("properties", .object(properties)))
        if !anyOf.isEmpty { members.append(("anyOf", .array(anyOf))) }
        return .object(members)
    }
}

extension PolicyParser.Validator {
    /// `identity.providers[i]`.
    func oauthProvider(_ json: PositionedJSON) -> OAuthProviderEntry? {
        // With an issuer the endpoints are discovered (docs/ARCHITECTURE.md, "Identity"): each one
        // given overrides the discovered one. Without, the token endpoint is required.
        let discovers = json["issuer"] != nil
        guard
            let members = object(
                json, context: "identity.providers[\(Self.identityIndex(json))]", keys: IdentityPolicyKeys.provider,
                required: discovers ? ["name", "clientId", "flow"] : ["name", "endpoints", "clientId", "flow"])
        else { return nil }
        let name = members["name"].flatMap { pattern($0, .identityName) }
        let issuer = members["issuer"].flatMap { pattern($0, .endpointURL) }
        let given = members["endpoints"].flatMap { value -> [String: String]? in
            guard
                let found = object(
                    value, context: "endpoints", keys: IdentityPolicyKeys.endpoints,
                    required: discovers ? [] : ["token"])
            else { return nil }
            var urls: [String: String] = [:]
            for (key, url) in found {
                guard let checked = pattern(url, .endpointURL) else { return nil }
                urls[key] = checked
            }
            return urls
        }
        let clientID = members["clientId"].flatMap { pattern($0, .clientID) }
        let scopes = members["scopes"].flatMap { value in list(value, of: "scopes") { self.pattern($0, .scopeToken) } }
        let flow = members["flow"].flatMap { pattern($0, .identityFlow) }.flatMap(IdentityFlow.init(rawValue:))
        guard let name, let clientID, let flow, members["issuer"] == nil || issuer != nil,
            members["scopes"] == nil || scopes != nil, members["endpoints"] == nil || given != nil
        else { return nil }
        let endpoints = given ?? [:]
        guard discovers || endpoints["token"] != nil else { return nil }
        let needed = flow == .device ? "deviceAuthorization" : "authorization"
        if !discovers, endpoints[needed] == nil, let value = members["endpoints"] {
            report(value, "the \"\(flow.rawValue)\" flow needs the \"\(needed)\" endpoint")
            return nil
        }
        // ID tokens are verified against the issuer: the keys alone would accept any issuer's token.
        if endpoints["jwks"] != nil, issuer == nil, let value = members["endpoints"] {
            report(value, "the \"jwks\" endpoint needs the provider's \"issuer\" (ID tokens name it in \"iss\")")
            return nil
        }
        return OAuthProviderEntry(
            name: name, issuer: issuer, deviceAuthorizationEndpoint: endpoints["deviceAuthorization"],
            authorizationEndpoint: endpoints["authorization"], tokenEndpoint: endpoints["token"],
            revocationEndpoint: endpoints["revocation"], jwksURI: endpoints["jwks"], clientID: clientID,
            scopes: scopes ?? [], flow: flow)
    }

    /// `identity.cpaProviders[i]`.
    func cpaProvider(_ json: PositionedJSON) -> CPAProviderEntry? {
        guard
            let members = object(
                json, context: "identity.cpaProviders[\(Self.identityIndex(json))]",
                keys: ["name", "baseURL", "domains", "mode"], required: ["name", "baseURL", "domains"])
        else { return nil }
        let name = members["name"].flatMap { pattern($0, .identityName) }
        let baseURL = members["baseURL"].flatMap { pattern($0, .endpointURL) }
        let domains = members["domains"].flatMap {
            list($0, of: "domains", nonEmpty: "domain") { self.pattern($0, .domainName) }
        }
        let mode = members["mode"].flatMap { pattern($0, .cpaMode) }.flatMap(CPATokenMode.init(rawValue:))
        guard let name, let baseURL, let domains, members["mode"] == nil || mode != nil else { return nil }
        return CPAProviderEntry(name: name, baseURL: baseURL, domains: domains, mode: mode ?? .user)
    }

    /// `identity.domains[i]`.
    func identityDomain(_ json: PositionedJSON) -> IdentityDomainEntry? {
        guard
            let members = object(
                json, context: "identity.domains[\(Self.identityIndex(json))]", keys: ["domain", "provider"],
                required: ["domain", "provider"])
        else { return nil }
        let domain = members["domain"].flatMap { pattern($0, .domainName) }
        let provider = members["provider"].flatMap { pattern($0, .identityName) }
        guard let domain, let provider else { return nil }
        return IdentityDomainEntry(domain: domain, provider: provider)
    }

    /// `identity.accessGroups[i]`.
    func accessGroup(_ json: PositionedJSON) -> AccessGroupEntry? {
        guard
            let members = object(
                json, context: "identity.accessGroups[\(Self.identityIndex(json))]", keys: ["name", "apps", "domains"],
                required: ["name", "apps", "domains"])
        else { return nil }
        let name = members["name"].flatMap { pattern($0, .identityName) }
        let apps = members["apps"].flatMap { appIds($0, nonEmpty: true) }
        let domains = members["domains"].flatMap {
            list($0, of: "domains", nonEmpty: "domain") { self.pattern($0, .domainName) }
        }
        guard let name, let apps, let domains else { return nil }
        return AccessGroupEntry(name: name, apps: apps, domains: domains)
    }

    private func pattern(_ json: PositionedJSON, _ pattern: StringPattern) -> String? {
        string(json, expected: pattern.expected, where: pattern.accepts)
    }

    private static func identityIndex(_ element: PositionedJSON) -> Int {
        if case .element(_, let index) = element.path { return index }
        return 0
    }
}
