import CordonPolicy

/// Sources, documents and requests shared by the merge, evaluation and explanation tests.
enum MergeFixtures {
    static let builtin = PolicySource(path: "<builtin>", origin: .builtin)
    static let admin = PolicySource(path: "/etc/cordon/policy.d/10-base.json", origin: .admin)
    static let team = PolicySource(path: "/etc/cordon/policy.d/20-team.json", origin: .admin)
    static let user = PolicySource(path: "/home/ada/.config/cordon/policy.d/mine.json", origin: .user)

    /// The built-in default: every declared setting at its default, constructed from the declarations.
    static let defaults = BuiltinPolicy.document

    static func rule(_ source: PolicySource, _ pointer: String) -> RuleReference {
        RuleReference(source: source, pointer: pointer)
    }

    /// The merged policy of `documents`, without the default.
    static func merge(_ documents: (PolicyDocument, PolicySource)...) -> EffectivePolicy {
        EffectivePolicy.merge(documents)
    }

    /// An evaluator over the default plus `documents`.
    static func evaluator(_ documents: (PolicyDocument, PolicySource)...) -> PolicyEvaluator {
        PolicyEvaluator(documents: [(defaults, builtin)] + documents)
    }

    /// A document that only sets `pasteboard`.
    static func pasteboard(_ copyOut: PasteboardLevel? = nil, maxChars: Int? = nil) -> PolicyDocument {
        PolicyDocument(PolicyKeys.Pasteboard.copyOut(ifSet: copyOut), PolicyKeys.Pasteboard.maxChars(ifSet: maxChars))
    }

    /// A document that only sets `documents`.
    static func documents(_ entries: PolicySettingEntry?...) -> PolicyDocument {
        documents(entries)
    }

    /// A document that only sets these `documents` entries.
    static func documents(_ entries: [PolicySettingEntry?]) -> PolicyDocument {
        PolicyDocument(settings: PolicySettingValues(entries), overrides: [])
    }

    static func app(_ id: String, managed: Bool = true) -> AppFacts { AppFacts(id: id, managed: managed) }

    static let notes = AppFacts(id: "com.example.notes", managed: true)
    static let mail = AppFacts(id: "com.example.mail", managed: true)
    static let browser = AppFacts(id: "org.example.browser", managed: false)
    static let game = AppFacts(id: "org.example.game", managed: false)

    static func paste(into app: AppFacts, from source: AppFacts?, length: Int? = nil) -> DecisionRequest {
        DecisionRequest(action: .pasteboardPaste, app: app, peer: source, length: length)
    }

    static func send(
        from app: AppFacts, to target: AppFacts?, contentType: String? = nil
    ) -> DecisionRequest {
        DecisionRequest(action: .documentSend, app: app, peer: target, contentType: contentType)
    }

    static func receive(
        by app: AppFacts, from source: AppFacts?, contentType: String? = nil
    ) -> DecisionRequest {
        DecisionRequest(action: .documentReceive, app: app, peer: source, contentType: contentType)
    }

    static func save(
        by app: AppFacts = notes, to location: String?, contentType: String? = nil
    ) -> DecisionRequest {
        DecisionRequest(action: .documentSave, app: app, location: location, contentType: contentType)
    }
}
