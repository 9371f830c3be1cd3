extension ErrorDeclarations {
    /// The errors of `io.cordon.Tokens` (software tokens and CT-KIP), in IDL order.
    static let tokens: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Tokens.DuplicateToken",
            "A token with this serial is imported already.",
            parameters: [.string("serial")],
            decode: { .duplicateToken(serial: $0.string("serial")) },
            explain: { p in
                let serial = p.string("serial")
                return ErrorText("token \(serial) is imported already", hint: "see it with `cordon token list`")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.TokenNotFound",
            "No token has this serial.",
            parameters: [.string("serial")],
            decode: { .tokenNotFound(serial: $0.string("serial")) },
            explain: { p in
                let serial = p.string("serial")
                return ErrorText("no token has the serial \(serial)", hint: "list the tokens with `cordon token list`")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.TokenExpired",
            "The token expired at 00:00:00 UTC of expiryDay.",
            parameters: [.string("expiryDay")],
            decode: { .tokenExpired(expiryDay: $0.string("expiryDay")) },
            explain: { p in
                let day = p.string("expiryDay")
                return ErrorText("the token expired on \(day)", hint: "ask your administrator for a new token")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.TokenBoundElsewhere",
            "The token is bound to another device, or needs a device id.",
            parameters: [.string("reason")],
            decode: { .tokenBoundElsewhere(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "the token cannot be used on this device: \(reason)",
                    hint: "ask for a token issued to this device: `cordon token list` shows its device id")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.TokenFormat",
            "The import or a parameter is not acceptable (field names it).",
            parameters: [.string("field"), .string("reason")],
            decode: { .tokenFormat(field: $0.string("field"), reason: $0.string("reason")) },
            explain: { p in
                let field = p.string("field")
                let reason = p.string("reason")
                return ErrorText(
                    "the token's \(field) is not acceptable: \(reason)", hint: "check the input", exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.TokenLimit",
            "The import would pass the policy's tokens.maxTokens; none of its tokens was stored.",
            parameters: [.int("maximum")],
            decode: { .tokenLimit(maximum: $0.int("maximum")) },
            explain: { p in
                let maximum = p.int("maximum")
                return ErrorText(
                    "the import would pass the policy's limit of \(maximum) tokens; nothing was imported",
                    hint: "remove tokens with `cordon token rm SERIAL`, or import fewer at a time")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.PinRequired",
            "The token needs a PIN and none was given or stored.",
            parameters: [.string("serial")],
            decode: { .pinRequired(serial: $0.string("serial")) },
            explain: { p in
                let serial = p.string("serial")
                return ErrorText("token \(serial) needs its PIN", hint: "give it with `--pin`", exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.KindNotAllowed",
            "The policy's tokens.importKinds does not allow this kind.",
            parameters: [.string("kind")],
            decode: { .tokenKindNotAllowed(kind: $0.string("kind")) },
            explain: { p in
                let kind = p.string("kind")
                return ErrorText(
                    "the policy does not allow importing \(kind) tokens",
                    hint: "see tokens.importKinds in `cordon policy show`, or ask your administrator")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.NotCodeReader",
            "The caller may not read codes (tokens.codeReaders, tokens.cliReadsCodes).",
            parameters: [.string("appId")],
            decode: { .notCodeReader(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "\(appId) may not read token codes",
                    hint: "the policy's tokens.codeReaders and tokens.cliReadsCodes say who may")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.Locked",
            "Locked under tokens.dataAccess whenUnlocked, or the key is not held.",
            parameters: [.string("state")],
            decode: { .tokensLocked(state: $0.string("state")) },
            explain: { p in
                let state = p.string("state")
                return ErrorText(
                    "the tokens are closed: the container is \(LifecycleState.userName(state))",
                    hint: ErrorText.lockedHint(state: state), exit: .locked)
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.CTKIPFailed",
            [
                "A CT-KIP provisioning from server failed at step (ClientHello, ServerHello, ClientNonce,",
                "ServerFinished); nothing was stored.",
            ],
            parameters: [.string("server"), .string("step"), .string("reason")],
            decode: { .ctkipFailed(server: $0.string("server"), step: $0.string("step"), reason: $0.string("reason")) },
            explain: { p in
                let server = p.string("server")
                let step = p.string("step")
                let reason = p.string("reason")
                return ErrorText(
                    "CT-KIP provisioning from \(server) failed at \(step): \(reason); nothing was imported",
                    hint: "check the URL and the activation code, or ask your administrator for a new one")
            }),
        ErrorDeclaration(
            "io.cordon.Tokens.CTKIPInsecureNotAllowed",
            "insecure was asked and tokens.ctkipAllowInsecure is false.",
            parameters: [.string("server")],
            decode: { .ctkipInsecureNotAllowed(server: $0.string("server")) },
            explain: { p in
                let server = p.string("server")
                return ErrorText(
                    "the policy does not allow importing from \(server) without certificate validation",
                    hint: "tokens.ctkipAllowInsecure decides; ask your administrator, or fix the server's certificate")
            }),
    ]
}
