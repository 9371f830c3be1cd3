/// What a CPA `/token` request answered (ETSI TS 103 407 §8.4).
enum CPAAnswer: Equatable {
    /// 200 with a token.
    case token(TokenSet)
    /// 202 `{"reason": "authorization_pending"}`: the user has not paired yet.
    case pending
    /// `slow_down`: the client polls too fast.
    case slowDown

    /// The error code of an answer: its `error` member, or its `reason` (the 202 of a pending
    /// association), as the EBU reference client reads them; nil when it has neither.
    static func errorCode(_ object: JSONObject, provider: String, step: IdentityStep)
        throws(IdentityError) -> (code: String, description: String?)?
    {
        for key in ["error", "reason"] where object[key] != nil && object[key] != .null {
            return (
                try object.string(key, provider: provider, step: step),
                try object.optionalString("error_description", provider: provider, step: step)
            )
        }
        return nil
    }

    /// A non-success status without an error code: a server error (5xx) or a malformed answer.
    static func requireSuccess(_ status: Int, provider: String, step: IdentityStep) throws(IdentityError) {
        if status >= 500 { throw .serverError(provider: provider, step: step, status: status) }
        guard (200..<300).contains(status) else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "HTTP status \(status) without an \"error\" member")
        }
    }

    /// The typed error for CPA error `code`: `cancelled` (and the reference client's
    /// `user_code:denied`) is a denial, `expired` an expiry, anything else the provider's error.
    /// A description quoting one of `secrets` is withheld.
    static func error(
        _ code: String, description: String?, provider: String, step: IdentityStep, secrets: [String],
        status: Int? = nil
    ) -> IdentityError {
        switch code {
        case "cancelled", "user_code:denied", "access_denied": return .denied(provider: provider, step: step)
        case "expired", "expired_token": return .expired(provider: provider, step: step)
        default:
            let quoted = description.map { text in secrets.contains { !$0.isEmpty && text.contains($0) } } ?? false
            return .providerError(
                provider: provider, step: step, error: code, description: quoted ? "(withheld)" : description,
                status: status)
        }
    }

    /// Reads a `/token` answer for `domain` at `now`; errors other than pending and slow_down throw.
    static func token(
        status: Int, body: [UInt8], provider: String, domain: String, now: Double, secrets: [String]
    ) throws(IdentityError) -> CPAAnswer {
        let step = IdentityStep.token
        let object = try JSONObject.answer(status: status, body: body, provider: provider, step: step)
        if let (code, description) = try errorCode(object, provider: provider, step: step) {
            switch code {
            case "authorization_pending": return .pending
            case "slow_down": return .slowDown
            default:
                throw error(
                    code, description: description, provider: provider, step: step, secrets: secrets, status: status)
            }
        }
        try requireSuccess(status, provider: provider, step: step)
        guard status != 202 else {
            throw .malformedResponse(provider: provider, step: step, reason: "HTTP status 202 without a \"reason\"")
        }
        let accessToken = try object.string("access_token", provider: provider, step: step)
        guard try object.string("token_type", provider: provider, step: step).lowercased() == "bearer" else {
            throw .malformedResponse(provider: provider, step: step, reason: "\"token_type\" is not Bearer")
        }
        let expiresIn = try object.integer("expires_in", provider: provider, step: step)
        guard expiresIn > 0, expiresIn <= 366 * 86400 else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "\"expires_in\" is \(expiresIn), not 1 to 31622400 seconds")
        }
        let answered = try object.optionalString("domain", provider: provider, step: step)
        guard answered == nil || answered == domain else {
            throw .malformedResponse(
                provider: provider, step: step, reason: "the token is for another domain than \(domain)")
        }
        return .token(
            TokenSet(
                accessToken: accessToken, tokenType: "Bearer", expiresAt: now + Double(expiresIn), refreshToken: nil,
                scope: nil, idToken: nil, domain: domain,
                domainDisplayName: try object.optionalString("domain_display_name", provider: provider, step: step),
                userName: try object.optionalString("user_name", provider: provider, step: step)))
    }
}
