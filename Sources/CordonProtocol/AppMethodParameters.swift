/// `RequestUnlock` parameters: who asks (for the prompt; the registration's id when registered)
/// and how long to wait for the user.
public struct RequestUnlockParameters: Sendable, Codable {
    public var appId: String?
    public var timeoutSeconds: Int?
    /// The registration token (`Register`'s reply) when the call comes on another connection of
    /// the registered process; without it, the calling connection must be the registered one.
    public var token: String?
    public init(appId: String? = nil, timeoutSeconds: Int? = nil, token: String? = nil) {
        self.appId = appId
        self.timeoutSeconds = timeoutSeconds
        self.token = token
    }
}

/// `RequestUnlock` reply: the state reached, and whether the user was prompted for it.
public struct RequestUnlockReply: Sendable, Codable, Equatable {
    public var state: LifecycleState
    public var prompted: Bool
    public init(state: LifecycleState, prompted: Bool) {
        self.state = state
        self.prompted = prompted
    }
}

/// `ShareDocument` parameters: hand the file at `path` to the running app `target`.
public struct ShareDocumentParameters: Sendable, Codable {
    public var path: String
    public var contentType: String?
    public var target: String
    public init(path: String, contentType: String? = nil, target: String) {
        self.path = path
        self.contentType = contentType
        self.target = target
    }
}

/// `OpenDocument` parameters: the document an `OpenDocument` event announced, by its `id`;
/// `token` names the registration when called on another connection than the app's own.
public struct OpenDocumentParameters: Sendable, Codable {
    public var id: String
    public var token: String?
    public init(id: String, token: String? = nil) {
        self.id = id
        self.token = token
    }
}

/// `GetNetworkPolicy` parameters: `token` names the registration when called on another
/// connection of the registered process; without it, the calling connection must be the registered one.
public struct GetNetworkPolicyParameters: Sendable, Codable, Equatable {
    public var token: String?
    public init(token: String? = nil) {
        self.token = token
    }
}

/// `OpenDocument` reply; the message carries the file's open descriptor (SCM_RIGHTS).
public struct OpenDocumentReply: Sendable, Codable {
    public var document: DocumentInfo
    public init(document: DocumentInfo) { self.document = document }
}

/// `io.cordon.Pasteboard.Copy` parameters.
public struct PasteboardCopyParameters: Sendable, Codable {
    public var content: String
    public var mimeType: String?
    public init(content: String, mimeType: String? = nil) {
        self.content = content
        self.mimeType = mimeType
    }
}

/// `io.cordon.Pasteboard.Copy` reply: `truncatedTo` when the policy cut the content.
public struct PasteboardCopyReply: Sendable, Codable, Equatable {
    public var truncatedTo: Int?
    public var decision: CordonDecision
    public init(truncatedTo: Int?, decision: CordonDecision) {
        self.truncatedTo = truncatedTo
        self.decision = decision
    }
}

/// `io.cordon.Pasteboard.Paste` reply: the content as the policy lets this app have it.
public struct PasteboardPasteReply: Sendable, Codable, Equatable {
    public var content: String
    public var mimeType: String
    /// The app that copied it ("" for an unregistered client such as the CLI).
    public var source: String
    /// Set when the policy's character limit cut the content to this many characters.
    public var truncatedTo: Int?
    public var decision: CordonDecision
    public init(content: String, mimeType: String, source: String, truncatedTo: Int?, decision: CordonDecision) {
        self.content = content
        self.mimeType = mimeType
        self.source = source
        self.truncatedTo = truncatedTo
        self.decision = decision
    }
}
