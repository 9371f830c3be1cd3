extension PolicyParser.Validator {
    typealias Rules = PolicyParser.Rules
    typealias Expected = PolicyParser.Expected

    /// The whole document: `schema` first, then every section.
    func document(_ json: PositionedJSON) -> PolicyDocument? {
        guard let members = object(json, context: "", keys: Rules.topLevelKeys) else { return nil }
        let identifier = PositionedJSON.quoted(PolicyDocument.schemaIdentifier)
        var schema = PolicyDocument.schemaIdentifier
        if let value = members["schema"] {
            if case .string(let text) = value.value, text == PolicyDocument.schemaIdentifier {
                schema = text
            } else {
                report(value, "expected \(identifier), got \(value.shortDescription)")
            }
        } else {
            report(json, "missing required key \"schema\"; expected \"schema\": \(identifier)")
        }
        return PolicyDocument(
            schema: schema,
            apps: members["apps"].flatMap { apps($0) },
            passcode: members["passcode"].flatMap { passcode($0) },
            lock: members["lock"].flatMap { lock($0, context: "lock") },
            pasteboard: members["pasteboard"].flatMap { pasteboard($0, context: "pasteboard") },
            documents: members["documents"].flatMap { documents($0, context: "documents") },
            storage: members["storage"].flatMap { storage($0, context: "storage") },
            conditions: members["conditions"].flatMap { conditions($0, context: "conditions") },
            overrides: members["overrides"].flatMap { overrides($0) } ?? [])
    }

    /// `apps`: managed apps (admin files only) and the action for unknown clients.
    func apps(_ json: PositionedJSON) -> AppsSection? {
        guard let members = object(json, context: "apps", keys: Rules.appsKeys) else { return nil }
        var managed: [ManagedApp]?
        if let value = members["managed"] {
            if source.origin == .user {
                report(value, "a user policy cannot make apps managed; \"apps.managed\" belongs in an admin policy")
            }
            managed = list(value, of: "managed apps") { [self] app in managedApp(app) }
        }
        return AppsSection(managed: managed, unknown: members["unknown"].flatMap { choice($0, Rules.unknownApp) })
    }

    /// `apps.managed[i]`: an id, its executables and optionally their digests.
    private func managedApp(_ json: PositionedJSON) -> ManagedApp? {
        let context = "apps.managed[\(Self.index(of: json))]"
        guard let members = object(json, context: context, keys: Rules.managedAppKeys, required: ["id", "executables"])
        else { return nil }
        let id = members["id"].flatMap { appId($0) }
        let executables = members["executables"].flatMap { value in
            list(value, of: "absolute paths", nonEmpty: "executable") { [self] path in
                string(path, expected: Expected.absolutePath, where: Rules.isAbsolutePath)
            }
        }
        let digests = members["sha256"].flatMap { value in
            list(value, of: "SHA-256 digests") { [self] digest in
                string(digest, expected: Expected.sha256, where: Rules.isSHA256)
            }
        }
        guard let id, let executables else { return nil }
        return ManagedApp(id: id, executables: executables, sha256: digests ?? [])
    }

    /// `passcode`: length, kind, simple sequences, attempts and their action.
    func passcode(_ json: PositionedJSON) -> PasscodeSection? {
        guard let members = object(json, context: "passcode", keys: Rules.passcodeKeys) else { return nil }
        return PasscodeSection(
            minLength: members["minLength"].flatMap { integer($0, in: Rules.minLength) },
            kind: members["kind"].flatMap { choice($0, Rules.passcodeKind) },
            allowSimple: members["allowSimple"].flatMap { bool($0) },
            maxAttempts: members["maxAttempts"].flatMap { integer($0, in: Rules.maxAttempts) },
            onMaxAttempts: members["onMaxAttempts"].flatMap { choice($0, Rules.maxAttemptsAction) })
    }

    /// `lock` (also inside an override, named by `context`).
    func lock(_ json: PositionedJSON, context: String) -> LockSection? {
        guard let members = object(json, context: context, keys: Rules.lockKeys) else { return nil }
        return LockSection(
            idleTimeoutSeconds: members["idleTimeoutSeconds"].flatMap { integer($0, in: Rules.idleTimeoutSeconds) },
            onScreenLock: members["onScreenLock"].flatMap { bool($0) },
            onSuspend: members["onSuspend"].flatMap { bool($0) },
            reauthGraceSeconds: members["reauthGraceSeconds"].flatMap { integer($0, in: Rules.reauthGraceSeconds) },
            discardKeyOnLock: members["discardKeyOnLock"].flatMap { bool($0) },
            ackDeadlineMs: members["ackDeadlineMs"].flatMap { integer($0, in: Rules.ackDeadlineMs) },
            onAckTimeout: members["onAckTimeout"].flatMap { choice($0, Rules.ackTimeout) })
    }

    /// `pasteboard` (also inside an override).
    func pasteboard(_ json: PositionedJSON, context: String) -> PasteboardSection? {
        guard let members = object(json, context: context, keys: Rules.pasteboardKeys) else { return nil }
        return PasteboardSection(
            copyOut: members["copyOut"].flatMap { choice($0, Rules.pasteboardLevel) },
            maxChars: members["maxChars"].flatMap { integer($0, in: Rules.maxChars) },
            clearOnLock: members["clearOnLock"].flatMap { bool($0) })
    }

    /// `documents` (also inside an override).
    func documents(_ json: PositionedJSON, context: String) -> DocumentsSection? {
        guard let members = object(json, context: context, keys: Rules.documentsKeys) else { return nil }
        return DocumentsSection(
            sendTo: members["sendTo"].flatMap { choice($0, Rules.shareScope) },
            receiveFrom: members["receiveFrom"].flatMap { choice($0, Rules.shareScope) },
            allowedTargets: members["allowedTargets"].flatMap { appIds($0) },
            allowedSources: members["allowedSources"].flatMap { appIds($0) },
            saveCopies: members["saveCopies"].flatMap { choice($0, Rules.saveCopies) },
            saveLocations: members["saveLocations"].flatMap { value in
                list(value, of: "globs") { [self] glob in string(glob, expected: Expected.glob, where: Rules.isGlob) }
            },
            blockedTypes: members["blockedTypes"].flatMap { value in
                list(value, of: "MIME types or extensions") { [self] type in
                    string(type, expected: Expected.blockedType, where: Rules.isBlockedType)
                }
            })
    }

    /// `storage` (also inside an override).
    func storage(_ json: PositionedJSON, context: String) -> StorageSection? {
        guard let members = object(json, context: context, keys: Rules.storageKeys) else { return nil }
        return StorageSection(dataAccess: members["dataAccess"].flatMap { choice($0, Rules.dataAccess) })
    }

    /// `conditions` (also inside an override).
    func conditions(_ json: PositionedJSON, context: String) -> ConditionsSection? {
        guard let members = object(json, context: context, keys: Rules.conditionsKeys) else { return nil }
        return ConditionsSection(
            debuggerAttached: members["debuggerAttached"].flatMap { choice($0, Rules.conditionAction) },
            preloadInjected: members["preloadInjected"].flatMap { choice($0, Rules.conditionAction) },
            executableMismatch: members["executableMismatch"].flatMap { choice($0, Rules.conditionAction) })
    }

    /// `overrides`: per-app sections; `apps` is required and non-empty.
    func overrides(_ json: PositionedJSON) -> [PolicyOverride]? {
        list(json, of: "overrides") { [self] entry in
            let context = "overrides[\(Self.index(of: entry))]"
            let special = [
                "passcode": "\"passcode\" cannot be set per app in \(PositionedJSON.quoted(context)); "
                    + "passcode rules apply to the whole container"
            ]
            guard
                let members = object(
                    entry, context: context, keys: Rules.overrideKeys, required: ["apps"], specialKeys: special)
            else { return nil }
            let apps = members["apps"].flatMap { appIds($0, nonEmpty: true) }
            let override = PolicyOverride(
                apps: apps ?? [],
                lock: members["lock"].flatMap { lock($0, context: context + ".lock") },
                pasteboard: members["pasteboard"].flatMap { pasteboard($0, context: context + ".pasteboard") },
                documents: members["documents"].flatMap { documents($0, context: context + ".documents") },
                storage: members["storage"].flatMap { storage($0, context: context + ".storage") },
                conditions: members["conditions"].flatMap { conditions($0, context: context + ".conditions") })
            return apps == nil ? nil : override
        }
    }

    /// The index of an array element, for naming it in messages.
    private static func index(of element: PositionedJSON) -> Int {
        if case .element(_, let index) = element.path { return index }
        return 0
    }
}
