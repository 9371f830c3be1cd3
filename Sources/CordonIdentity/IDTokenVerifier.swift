import Foundation
import JWTKit

/// Verifies an OpenID Connect ID token (OpenID Connect Core §3.1.3.7) against the issuer's JWKS
/// with vapor/jwt-kit: the signature (RS*, PS*, ES*, EdDSA; no `none`, no HMAC with a public key),
/// `iss` equal to the issuer, `aud` holding the client id and no other audience, `azp` (when
/// present) the client id, `exp` and `iat` against the injected clock with a leeway, and `nonce`
/// when one was sent (docs/ARCHITECTURE.md, "Identity").
///
/// No I/O: the driver fetches the JWKS (the provider's `jwks` endpoint) and passes its bytes. Every
/// failure is ``IdentityError/invalidIDToken`` naming the provider; its reason never holds the
/// token or a claim's value.
public struct IDTokenVerifier: Sendable {
    public let provider: String
    /// The issuer identifier the `iss` claim must equal exactly.
    public let issuer: String
    /// The client id the `aud` claim must hold.
    public let clientID: String
    /// Clock skew allowed for `exp` and `iat`, in seconds.
    public let leeway: Double

    /// The reason of ``IdentityError/invalidIDToken`` when no key of the JWKS has the token's
    /// `kid`: the driver may fetch the JWKS again once (the provider rotated its keys).
    public static let noMatchingKey = "no key of the JWKS matches the ID token"

    /// The largest ID token or JWKS read (64 KiB, as ``TokenResponseParser/maximumBody``).
    public static let maximumSize = TokenResponseParser.maximumBody

    public init(provider: String, issuer: String, clientID: String, leeway: Double = 60) {
        self.provider = provider
        self.issuer = issuer
        self.clientID = clientID
        self.leeway = leeway
    }

    /// The claims of `idToken` once it verifies with a key of `jwks` (the JWKS document's bytes)
    /// at `now` (Unix time); `nonce` is the one sent in the authorization request, if any.
    public func verify(_ idToken: String, jwks: [UInt8], nonce: String?, now: Double) async throws(IdentityError)
        -> IDTokenClaims
    {
        guard idToken.utf8.count <= Self.maximumSize, jwks.count <= Self.maximumSize else {
            throw refused("the ID token or the JWKS is over 64 KiB")
        }
        let keys = JWTKeyCollection()
        let set: JWKS
        do {
            set = try JSONDecoder().decode(JWKS.self, from: Data(jwks))
            guard !set.keys.isEmpty else { throw refused("the JWKS has no key") }
            try await keys.add(jwks: set)
        } catch let error as IdentityError {
            throw error
        } catch {
            throw refused("the JWKS is not a usable key set")
        }
        // jwt-kit falls back to its first key for a `kid` it does not hold: say that no key has
        // it, so the driver knows the set may be stale (the provider rotated its keys).
        if let kid = try? DefaultJWTParser().parse(Array(idToken.utf8), as: IDTokenPayload.self).header.kid,
            !set.keys.contains(where: { $0.keyIdentifier?.string == kid })
        {
            throw refused(Self.noMatchingKey)
        }
        let payload: IDTokenPayload
        do {
            payload = try await keys.verify(idToken, as: IDTokenPayload.self, expectedAudience: clientID)
        } catch let error as JWTError {
            throw refused(Self.reason(error, clientID: clientID))
        } catch {
            throw refused("a required claim is missing or of the wrong type")
        }
        try check(payload, nonce: nonce, now: now)
        return IDTokenClaims(
            issuer: payload.iss.value, subject: payload.sub.value, audience: payload.aud.value,
            expiresAt: payload.exp.value.timeIntervalSince1970, issuedAt: payload.iat.value.timeIntervalSince1970,
            nonce: payload.nonce, name: payload.name, email: payload.email,
            preferredUsername: payload.preferredUsername)
    }

    /// The claims the signature does not settle, with the injected clock.
    private func check(_ payload: IDTokenPayload, nonce: String?, now: Double) throws(IdentityError) {
        guard payload.iss.value == issuer else { throw refused("\"iss\" is not the issuer \(issuer)") }
        if let presenter = payload.azp, presenter != clientID {
            throw refused("\"azp\" is not the client \(clientID)")
        }
        do {
            try payload.exp.verifyNotExpired(currentDate: Date(timeIntervalSince1970: now - leeway))
        } catch {
            throw refused("the ID token has expired")
        }
        guard payload.iat.value.timeIntervalSince1970 <= now + leeway else {
            throw refused("the ID token was issued in the future")
        }
        if let nonce, payload.nonce != nonce {
            throw refused("\"nonce\" is not the one sent")
        }
    }

    private func refused(_ reason: String) -> IdentityError {
        .invalidIDToken(provider: provider, reason: reason)
    }

    /// What went wrong in jwt-kit's verification, in words that hold no token or claim value.
    static func reason(_ error: JWTError, clientID: String) -> String {
        switch error.errorType {
        case .signatureVerificationFailed: "the signature does not verify with the issuer's keys"
        case .claimVerificationFailure where error.failedClaim is AudienceClaim:
            "\"aud\" is not the client \(clientID) alone"
        case .claimVerificationFailure: "a claim does not verify"
        case .malformedToken: "the ID token is not a compact JWS"
        case .noKeyProvided, .unknownKID, .missingKIDHeader: noMatchingKey
        case .unsupportedAlgorithm, .signingAlgorithmFailure, .invalidJWK, .unsupportedCurve:
            "the ID token's algorithm or key is not usable"
        default: "the ID token does not verify"
        }
    }
}

/// The verified claims of an ID token that the broker uses (OpenID Connect Core §2, §5.1).
public struct IDTokenClaims: Sendable, Equatable {
    public var issuer: String
    /// `sub`: the user at the issuer.
    public var subject: String
    public var audience: [String]
    /// Unix time of `exp`.
    public var expiresAt: Double
    /// Unix time of `iat`.
    public var issuedAt: Double
    public var nonce: String?
    public var name: String?
    public var email: String?
    public var preferredUsername: String?

    public init(
        issuer: String, subject: String, audience: [String], expiresAt: Double, issuedAt: Double, nonce: String?,
        name: String?, email: String?, preferredUsername: String?
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.name = name
        self.email = email
        self.preferredUsername = preferredUsername
    }
}

/// The ID token payload as jwt-kit decodes it; the time claims are checked by ``IDTokenVerifier``
/// with the injected clock, not here.
struct IDTokenPayload: JWTIdentityToken {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var nonce: String?
    var azp: String?
    var name: String?
    var email: String?
    var preferredUsername: String?

    var audience: AudienceClaim { aud }

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, azp, name, email
        case preferredUsername = "preferred_username"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
