extension ErrorDeclarations {
    /// The errors of `io.cordon.App` (registration, events, keys and what the policy refuses), in IDL order.
    static let app: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.App.NotRegistered",
            "Call Register first.",
            parameters: [],
            decode: { _ in .notRegistered },
            explain: { _ in
                ErrorText(
                    "this connection has not registered an app",
                    hint: "an app must register first (CordonApp.connect or `Register`)")
            }),
        ErrorDeclaration(
            "io.cordon.App.AlreadyRegistered",
            "This connection already registered an app.",
            parameters: [.string("appId")],
            decode: { .alreadyRegistered(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "this connection already registered the app \(appId)",
                    hint: "use one connection per app")
            }),
        ErrorDeclaration(
            "io.cordon.App.InvalidAppId",
            "The app id is not acceptable.",
            parameters: [.string("appId"), .string("reason")],
            decode: { .invalidAppId(appId: $0.string("appId"), reason: $0.string("reason")) },
            explain: { p in
                let appId = p.string("appId")
                let reason = p.string("reason")
                return ErrorText(
                    "the app id '\(appId)' is not acceptable: \(reason)",
                    hint: "use a reverse-DNS app id such as com.example.notes")
            }),
        ErrorDeclaration(
            "io.cordon.App.KeyUnavailable",
            "No key: the container is locked without a key, or uninitialized.",
            parameters: [.string("state")],
            decode: { .keyUnavailable(state: $0.string("state")) },
            explain: { p in
                let state = p.string("state")
                return ErrorText(
                    "no key is available: the container is \(LifecycleState.userName(state))",
                    hint: ErrorText.lockedHint(state: state), exit: .locked)
            }),
        ErrorDeclaration(
            "io.cordon.App.NotManaged",
            "The app is registered unmanaged and gets no key.",
            parameters: [.string("appId")],
            decode: { .notManaged(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "the app \(appId) is not managed and gets no key",
                    hint: "ask your administrator to list the app under apps.managed in the policy")
            }),
        ErrorDeclaration(
            "io.cordon.App.SubscriberTooSlow",
            "The subscriber did not read its events and was disconnected.",
            parameters: [.int("limit")],
            decode: { .subscriberTooSlow(limit: $0.int("limit")) },
            explain: { p in
                let limit = p.int("limit")
                return ErrorText(
                    "cordond dropped this subscriber: more than \(limit) events were left unread",
                    hint: "read events promptly, then subscribe again")
            }),
        ErrorDeclaration(
            "io.cordon.App.InvalidToken",
            "The registration token is unknown or belongs to another process.",
            parameters: [],
            decode: { _ in .invalidToken },
            explain: { _ in
                ErrorText(
                    "the registration token is unknown or belongs to another process",
                    hint: "register the app again")
            }),
        ErrorDeclaration(
            "io.cordon.App.UnknownSequence",
            "The acknowledged seq was never sent to this app.",
            parameters: [.int("seq")],
            decode: { .unknownSequence(seq: $0.int("seq")) },
            explain: { p in
                let seq = p.int("seq")
                return ErrorText(
                    "event \(seq) was never sent to this app", hint: "acknowledge only events the app received")
            }),
        ErrorDeclaration(
            "io.cordon.App.UnknownAction",
            "The action name is not one the policy decides.",
            parameters: [.string("action")],
            decode: { .unknownAction(action: $0.string("action")) },
            explain: { p in
                let action = p.string("action")
                return ErrorText(
                    "cordond does not decide the action '\(action)'",
                    hint: "use one of: \(PolicyAction.allCases.map(\.rawValue).joined(separator: ", ")) "
                        + "(cordon and cordond may be different versions)",
                    exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.App.Refused",
            "The policy refuses this client.",
            parameters: [.string("appId"), .string("reason")],
            decode: { .refused(appId: $0.string("appId"), reason: $0.string("reason")) },
            explain: { p in
                let appId = p.string("appId")
                let reason = p.string("reason")
                return ErrorText(
                    "the policy refuses \(appId.isEmpty ? "this client" : "the app \(appId)"): \(reason)",
                    hint: "see the rules with `cordon policy show`, or ask your administrator")
            }),
        ErrorDeclaration(
            "io.cordon.App.UnlockUnavailable",
            "RequestUnlock cannot prompt: no pinentry program, or no display or terminal.",
            parameters: [.string("reason")],
            decode: { .unlockUnavailable(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText(
                    "cordond cannot ask for the passcode: \(reason)", hint: "run `cordon unlock` yourself",
                    exit: .passcode)
            }),
        ErrorDeclaration(
            "io.cordon.App.UnlockCancelled",
            "RequestUnlock: the user cancelled the prompt.",
            parameters: [],
            decode: { _ in .unlockCancelled },
            explain: { _ in
                ErrorText("the unlock request was cancelled", hint: "run `cordon unlock` to unlock", exit: .cancelled)
            }),
        ErrorDeclaration(
            "io.cordon.App.UnlockTimedOut",
            "RequestUnlock: the container was not unlocked in time.",
            parameters: [.float("seconds")],
            decode: { .unlockTimedOut(seconds: $0.double("seconds")) },
            explain: { p in
                let seconds = p.double("seconds")
                return ErrorText(
                    "the container was not unlocked within \(ErrorText.seconds(seconds))", hint: "run `cordon unlock`",
                    exit: .locked)
            }),
        ErrorDeclaration(
            "io.cordon.App.Denied",
            "The policy denies the action.",
            parameters: [.string("action"), .string("reason"), .strings("rules")],
            decode: { .denied(action: $0.string("action"), reason: $0.string("reason"), rules: $0.strings("rules")) },
            explain: { p in
                let action = p.string("action")
                let reason = p.string("reason")
                let rules = p.strings("rules")
                return ErrorText(
                    "the policy denies \(action): \(reason)"
                        + (rules.isEmpty ? "" : " (\(rules.joined(separator: ", ")))"),
                    hint: "see why with `cordon policy explain --action \(action)`, or ask your administrator")
            }),
        ErrorDeclaration(
            "io.cordon.App.TargetNotRunning",
            "The target app is not running (registered and subscribed).",
            parameters: [.string("appId")],
            decode: { .targetNotRunning(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "the app \(appId) is not running", hint: "start it, then try again (see `cordon apps`)")
            }),
        ErrorDeclaration(
            "io.cordon.App.InvalidProcess",
            "Register(pid) named a process this connection may not register for.",
            parameters: [.int("pid"), .string("reason")],
            decode: { .invalidProcess(pid: $0.int("pid"), reason: $0.string("reason")) },
            explain: { p in
                let pid = p.int("pid")
                let reason = p.string("reason")
                return ErrorText(
                    "cannot register process \(pid): \(reason)",
                    hint: "register only your own child processes (as `cordon run` does)")
            }),
        ErrorDeclaration(
            "io.cordon.App.ProcessChanged",
            "The registered process is no longer the one that registered, or no longer passes its checks.",
            parameters: [.string("appId"), .string("reason")],
            decode: { .processChanged(appId: $0.string("appId"), reason: $0.string("reason")) },
            explain: { p in
                let appId = p.string("appId")
                let reason = p.string("reason")
                return ErrorText(
                    "the agent no longer trusts this process as \(appId): \(reason)",
                    hint: "restart the app unmodified, without a debugger or injected libraries")
            }),
        ErrorDeclaration(
            "io.cordon.App.ProcessNotHardened",
            "The registered process is dumpable: no key or data until it makes itself non-dumpable.",
            parameters: [.string("appId")],
            decode: { .processNotHardened(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "\(appId) is dumpable: any program of this user could read its key from its memory, so the agent gives it none",
                    hint: "make the app non-dumpable after it registers (prctl(PR_SET_DUMPABLE, 0); CordonKit does)")
            }),
        ErrorDeclaration(
            "io.cordon.App.RegisteredOnBehalf",
            "A registration made on another process's behalf gets enforcement, never a key or data.",
            parameters: [.string("appId")],
            decode: { .registeredOnBehalf(appId: $0.string("appId")) },
            explain: { p in
                let appId = p.string("appId")
                return ErrorText(
                    "\(appId) was registered on another process's behalf, which gets enforcement but no key",
                    hint: "the app must register itself (CordonKit) to get its key")
            }),
        ErrorDeclaration(
            "io.cordon.App.AppIdInUse",
            "A live process is already registered as this managed app.",
            parameters: [.string("appId"), .int("pid")],
            decode: { .appIdInUse(appId: $0.string("appId"), pid: $0.int("pid")) },
            explain: { p in
                let appId = p.string("appId")
                let pid = p.int("pid")
                return ErrorText(
                    "\(appId) is already registered by process \(pid)",
                    hint: "close the running instance first (see `cordon apps`)")
            }),
        ErrorDeclaration(
            "io.cordon.App.PostureRefused",
            [
                "A device posture check the policy's conditions set to block or wipe fails: the registration",
                "is refused (reason is always posture).",
            ],
            parameters: [
                .string("appId"), .string("check"), .string("evidence"),
                .constant("reason", EventReason.posture.rawValue),
            ],
            decode: {
                .postureRefused(appId: $0.string("appId"), check: $0.string("check"), evidence: $0.string("evidence"))
            },
            explain: { p in
                let appId = p.string("appId")
                let check = p.string("check")
                let evidence = p.string("evidence")
                return ErrorText(
                    "\(appId) is refused: the device posture check \(check) fails (\(evidence))",
                    hint: "see `cordon posture`; the policy's conditions section decides")
            }),
        ErrorDeclaration(
            "io.cordon.App.InvalidClientCertificate",
            "The policy's network.clientCertificate cannot be used: the parameter, its path and what is wrong.",
            parameters: [.string("parameter"), .string("path"), .string("reason")],
            decode: {
                .invalidClientCertificate(
                    parameter: $0.string("parameter"), path: $0.string("path"), reason: $0.string("reason"))
            },
            explain: { p in
                let parameter = p.string("parameter")
                let path = p.string("path")
                let reason = p.string("reason")
                return ErrorText(
                    "the policy's \(parameter) \(path) cannot be used: \(reason)",
                    hint:
                        "ask your administrator to fix network.clientCertificate (a PEM certificate chain and its unencrypted key, readable by you)"
                )
            }),
    ]
}
