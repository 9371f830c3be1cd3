extension ErrorDeclarations {
    /// The errors of `io.cordon.Storage` (the apps' encrypted records), in IDL order.
    static let storage: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Storage.ContainerLocked",
            "The app's storage is closed: locked under storage.dataAccess whenUnlocked, or no key.",
            parameters: [.string("appId"), .string("state")],
            decode: { .containerLocked(appId: $0.string("appId"), state: $0.string("state")) },
            explain: { p in
                let appId = p.string("appId")
                let state = p.string("state")
                return ErrorText(
                    "the storage of \(appId) is closed: the container is \(LifecycleState.userName(state))",
                    hint: ErrorText.lockedHint(state: state), exit: .locked)
            }),
        ErrorDeclaration(
            "io.cordon.Storage.NotFound",
            "No record has this name in this namespace.",
            parameters: [.string("namespace"), .string("name")],
            decode: { .recordNotFound(namespace: $0.string("namespace"), name: $0.string("name")) },
            explain: { p in
                let namespace = p.string("namespace")
                let name = p.string("name")
                return ErrorText(
                    "no record named \"\(name)\" in namespace \"\(namespace)\"",
                    hint: "list the records with `cordon storage ls --app ID`")
            }),
        ErrorDeclaration(
            "io.cordon.Storage.ValueTooLarge",
            "The value is over the bound (bytes).",
            parameters: [.int("size"), .int("limit")],
            decode: { .valueTooLarge(size: $0.int("size"), limit: $0.int("limit")) },
            explain: { p in
                let size = p.int("size")
                let limit = p.int("limit")
                return ErrorText(
                    "the value is \(size) bytes, over the storage limit of \(limit) bytes",
                    hint: "store larger data in a file", exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.Storage.InvalidName",
            "A namespace, name or prefix is empty, too long or holds a NUL (field says which).",
            parameters: [.string("field"), .string("reason")],
            decode: { .invalidRecordName(field: $0.string("field"), reason: $0.string("reason")) },
            explain: { p in
                let field = p.string("field")
                let reason = p.string("reason")
                return ErrorText(
                    "the record's \(field) is not acceptable: \(reason)", hint: "use a shorter name without NUL bytes",
                    exit: .usage)
            }),
        ErrorDeclaration(
            "io.cordon.Storage.Tampered",
            "The stored record does not open: changed, copied from another slot, or wiped.",
            parameters: [.string("namespace"), .string("name")],
            decode: { .recordTampered(namespace: $0.string("namespace"), name: $0.string("name")) },
            explain: { p in
                let namespace = p.string("namespace")
                let name = p.string("name")
                return ErrorText(
                    "the record \"\(name)\" in namespace \"\(namespace)\" does not open: it was changed, copied or wiped",
                    hint: "delete it with `cordon storage rm` and store it again")
            }),
        ErrorDeclaration(
            "io.cordon.Storage.StorageFailed",
            "The storage file could not be written (a full disk); nothing stored was changed.",
            parameters: [.string("appId"), .string("reason")],
            decode: { .storageFailed(appId: $0.string("appId"), reason: $0.string("reason")) },
            explain: { p in
                let appId = p.string("appId")
                let reason = p.string("reason")
                return ErrorText(
                    "the storage of \(appId) could not be written: \(reason); nothing stored was changed",
                    hint: "free disk space, then try again")
            }),
    ]
}
