extension ErrorDeclarations {
    /// The errors of `io.cordon.Identity` (the identity broker), in IDL order.
    static let identity: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Identity.UnknownDomain",
            "No provider signs in for domain (identity.domains).",
            parameters: [.string("domain")],
            decode: { .identityUnknownDomain(domain: $0.string("domain")) },
            explain: { p in
                let domain = p.string("domain")
                return ErrorText(
                    "no identity provider signs in for \(domain)",
                    hint: "see identity.domains in `cordon policy show`, or ask your administrator")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.UnknownProvider",
            "No provider has this name, or none was named and there are several.",
            parameters: [.string("provider"), .strings("known")],
            decode: { .identityUnknownProvider(provider: $0.string("provider"), known: $0.strings("known")) },
            explain: { p in
                let provider = p.string("provider")
                let known = p.strings("known")
                let names = known.isEmpty ? "the policy declares none" : "known: \(known.joined(separator: ", "))"
                return ErrorText(
                    provider.isEmpty
                        ? "name the identity provider (\(names))" : "no identity provider \(provider) (\(names))",
                    hint: known.isEmpty
                        ? "see identity.providers and identity.cpaProviders in `cordon policy show`"
                        : "give one with `--provider`")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.NotInAccessGroup",
            "The app is in no access group with domain.",
            parameters: [.string("appId"), .string("domain")],
            decode: { .identityNotInAccessGroup(appId: $0.string("appId"), domain: $0.string("domain")) },
            explain: { p in
                let appId = p.string("appId")
                let domain = p.string("domain")
                return ErrorText(
                    "\(appId) is in no access group with \(domain): it gets no token",
                    hint: "identity.accessGroups decides; ask your administrator")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.Locked",
            "The container is not unlocked.",
            parameters: [.string("state")],
            decode: { .identityLocked(state: $0.string("state")) },
            explain: { p in
                let state = p.string("state")
                return ErrorText(
                    "no sign-in and no token while the container is \(LifecycleState.userName(state))",
                    hint: ErrorText.lockedHint(state: state), exit: .locked)
            }),
        ErrorDeclaration(
            "io.cordon.Identity.SignInCancelled",
            "The sign-in was cancelled (the user, a lock, a sign-out).",
            parameters: [.string("provider"), .string("step")],
            decode: { .signInCancelled(provider: $0.string("provider"), step: $0.string("step")) },
            explain: { p in
                let provider = p.string("provider")
                let step = p.string("step")
                return ErrorText(
                    "the sign-in with \(provider) was cancelled (\(step))", hint: "sign in again: `cordon login`")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.SignInExpired",
            "The sign-in expired before the user approved it.",
            parameters: [.string("provider"), .string("step")],
            decode: { .signInExpired(provider: $0.string("provider"), step: $0.string("step")) },
            explain: { p in
                let provider = p.string("provider")
                let step = p.string("step")
                return ErrorText(
                    "the sign-in with \(provider) expired before it was approved (\(step))",
                    hint: "sign in again with `cordon login` and approve it in time")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.SignInFailed",
            "The sign-in or refresh failed at step.",
            parameters: [.string("provider"), .string("step"), .string("reason")],
            decode: {
                .signInFailed(provider: $0.string("provider"), step: $0.string("step"), reason: $0.string("reason"))
            },
            explain: { p in
                let provider = p.string("provider")
                let step = p.string("step")
                let reason = p.string("reason")
                return ErrorText(
                    "the sign-in with \(provider) failed at \(IdentityStepWords.phrase(step)): \(reason)",
                    hint: "`cordon identity status` shows the provider's endpoints; once the cause is fixed, "
                        + "`cordon login` again")
            }),
        ErrorDeclaration(
            "io.cordon.Identity.SessionExpired",
            "The session went past identity.offlineGraceMinutes without reaching its provider.",
            parameters: [.string("provider")],
            decode: { .sessionExpired(provider: $0.string("provider")) },
            explain: { p in
                let provider = p.string("provider")
                return ErrorText(
                    "the session with \(provider) expired offline (identity.offlineGraceMinutes)",
                    hint: "sign in again when the provider is reachable: `cordon login`")
            }),
    ]
}
