/// A policy decision: allowed or not, why, what the caller must do, and which rules decided.
///
/// ```swift
/// let decision = try await app.check(.pasteboardCopy, length: text.count)
/// guard decision.allowed else { return showBlocked(decision.reason) }
/// let copied = decision.truncateTo.map { String(text.prefix($0)) } ?? text
/// ```
/// An action this vocabulary does not know (from a newer agent) fails to decode with the
/// action's name in the error; it never becomes another action.
public struct CordonDecision: Sendable, Codable, Equatable {
    /// Whether the action may go ahead.
    public var allowed: Bool
    /// The action decided.
    public var action: PolicyAction
    /// A sentence for the user and the audit log.
    public var reason: String
    /// The truncation obligation: the caller must cut the content to this many characters.
    public var truncateTo: Int?
    /// The deciding rules, as `FILE#POINTER`.
    public var rules: [String]

    /// A decision.
    public init(allowed: Bool, action: PolicyAction, reason: String, truncateTo: Int? = nil, rules: [String]) {
        self.allowed = allowed
        self.action = action
        self.reason = reason
        self.truncateTo = truncateTo
        self.rules = rules
    }
}

/// `io.cordon.App.Check` parameters.
public struct CheckParameters: Sendable, Codable, Equatable {
    /// `pasteboard.copy`, `pasteboard.paste`, `document.send`, `document.receive`, `document.save`.
    public var action: String
    /// The other app's id (send, receive, paste), or the destination path (save).
    public var target: String?
    /// Extra facts: `contentType`, `length`.
    public var context: [String: String]?

    public init(action: String, target: String?, context: [String: String]?) {
        self.action = action
        self.target = target
        self.context = context
    }
}

/// `Check` reply.
public struct CheckReply: Sendable, Codable, Equatable {
    public var decision: CordonDecision
    public init(decision: CordonDecision) { self.decision = decision }
}

/// One resolved setting of the effective policy, with where it came from.
public struct WireSetting: Sendable, Codable, Equatable {
    /// e.g. `/pasteboard/copyOut`.
    public var path: String
    /// The value as `cordon policy show` prints it (`unlimited` / `unrestricted` for no bound).
    public var value: String
    /// The rules whose value won, as `FILE#POINTER`.
    public var rules: [String]
    /// The value as JSON text, as a policy file would write it (`null` for no bound). Absent
    /// from agents that predate it.
    public var json: String?

    public init(path: String, value: String, rules: [String], json: String? = nil) {
        self.path = path
        self.value = value
        self.rules = rules
        self.json = json
    }

    /// The value as a JSON value (parsed from ``json``); nil when the agent sent none.
    public var jsonValue: JSONValue? {
        guard let json else { return nil }
        return try? VarlinkJSONDecoder().decode(JSONValue.self, from: Array(json.utf8))
    }
}

/// `io.cordon.Policy.GetEffective` reply.
public struct EffectivePolicyReply: Sendable, Codable, Equatable {
    public var version: String
    public var settings: [WireSetting]
    public init(version: String, settings: [WireSetting]) {
        self.version = version
        self.settings = settings
    }
}

/// One problem in a policy document.
public struct WireProblem: Sendable, Codable, Equatable {
    public var path: String
    public var pointer: String
    public var line: Int?
    public var column: Int?
    public var message: String
    public init(path: String, pointer: String, line: Int?, column: Int?, message: String) {
        self.path = path
        self.pointer = pointer
        self.line = line
        self.column = column
        self.message = message
    }
}

/// `io.cordon.Policy.Validate` parameters: the document's text; `user` validates as a user file.
public struct ValidateParameters: Sendable, Codable, Equatable {
    public var document: String
    public var path: String?
    public var user: Bool?
    public init(document: String, path: String?, user: Bool?) {
        self.document = document
        self.path = path
        self.user = user
    }
}

/// `Validate` reply.
public struct ValidateReply: Sendable, Codable, Equatable {
    public var valid: Bool
    public var problems: [WireProblem]
    public init(valid: Bool, problems: [WireProblem]) {
        self.valid = valid
        self.problems = problems
    }
}

/// `io.cordon.Policy.Explain` parameters.
public struct ExplainParameters: Sendable, Codable, Equatable {
    public var appId: String
    public var action: String
    public var target: String?
    public var context: [String: String]?
    public init(appId: String, action: String, target: String?, context: [String: String]?) {
        self.appId = appId
        self.action = action
        self.target = target
        self.context = context
    }
}

/// One consulted setting in an explanation: every file's value and which won.
public struct WireExplanationStep: Sendable, Codable, Equatable {
    public var setting: String
    public var value: String
    /// `FILE#POINTER = VALUE`, the winners marked by `won`.
    public var candidates: [WireCandidate]
    public init(setting: String, value: String, candidates: [WireCandidate]) {
        self.setting = setting
        self.value = value
        self.candidates = candidates
    }
}

/// One file's value for a setting.
public struct WireCandidate: Sendable, Codable, Equatable {
    public var rule: String
    public var value: String
    public var won: Bool
    public init(rule: String, value: String, won: Bool) {
        self.rule = rule
        self.value = value
        self.won = won
    }
}

/// `Explain` reply.
public struct ExplainReply: Sendable, Codable, Equatable {
    public var decision: CordonDecision
    public var steps: [WireExplanationStep]
    public init(decision: CordonDecision, steps: [WireExplanationStep]) {
        self.decision = decision
        self.steps = steps
    }
}

/// `io.cordon.Audit.Query` / `Follow` parameters.
public struct AuditQueryParameters: Sendable, Codable, Equatable {
    public var since: Double?
    public var appId: String?
    public var limit: Int?
    public init(since: Double?, appId: String?, limit: Int?) {
        self.since = since
        self.appId = appId
        self.limit = limit
    }
}

/// `Query` reply.
public struct AuditQueryReply: Sendable, Codable, Equatable {
    public var records: [AuditEntry]
    public init(records: [AuditEntry]) { self.records = records }
}

/// One `Follow` reply.
public struct AuditFollowReply: Sendable, Codable, Equatable {
    public var record: AuditEntry
    public init(record: AuditEntry) { self.record = record }
}
