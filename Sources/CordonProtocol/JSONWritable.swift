/// A wire value that writes its own JSON: the replies the agent sends most often, without
/// `Encoder` containers, existential boxes or generic metadata lookups per call
/// (docs/PERFORMANCE.md, "Round trips"). What it writes equals its `Encodable` form byte for
/// byte; `JSONWritableTests` compares the two on random values.
public protocol JSONWritable: Encodable {
    /// Writes this value as one JSON value.
    func writeJSON(to writer: inout JSONWriter) throws
}

extension VarlinkJSONEncoder {
    /// The JSON text of a value that writes itself.
    public func encode(writing value: some JSONWritable) throws -> [UInt8] {
        var writer = JSONWriter()
        try value.writeJSON(to: &writer)
        return writer.bytes
    }
}

extension VarlinkReply: JSONWritable where Parameters: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        try writer.member("parameters", parameters)
        writer.member("continues", continues)
        writer.member("error", error)
        writer.endObject()
    }
}

extension StatusReply: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        try writer.member("status", status)
        writer.endObject()
    }
}

extension AgentStatus: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("state", state.rawValue)
        writer.member("seq", seq)
        writer.member("failedAttempts", failedAttempts)
        writer.member("maxAttempts", maxAttempts)
        try writer.member("retryAfterSeconds", retryAfterSeconds)
        writer.member("idleTimeoutSeconds", idleTimeoutSeconds)
        writer.member("reauthGraceSeconds", reauthGraceSeconds)
        writer.member("ackDeadlineMs", ackDeadlineMs)
        writer.member("apps", apps)
        writer.member("version", version)
        writer.member("insecureKDF", insecureKDF)
        writer.member("lockTriggers", lockTriggers)
        try writer.member("auditProblem", auditProblem)
        writer.member("testMode", testMode)
        try writer.member("keyProtection", keyProtection)
        writer.member("onMaxAttempts", onMaxAttempts)
        try writer.member("fleet", fleet)
        writer.endObject()
    }
}

extension FleetStatus: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("device", device)
        try writer.member("verifiedAt", verifiedAt)
        try writer.member("staleAfter", staleAfter)
        writer.member("stale", stale)
        writer.member("policyStale", policyStale)
        writer.member("lastCommand", lastCommand)
        try writer.member("lastCommandAt", lastCommandAt)
        writer.member("problem", problem)
        writer.endObject()
    }
}

extension AuditProblem: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        try writer.member("since", since)
        writer.member("unstored", unstored)
        writer.member("error", error)
        writer.endObject()
    }
}

extension KeyProtectionStatus: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("kind", kind)
        writer.member("pcrs", pcrs)
        writer.member("attemptsLeft", attemptsLeft)
        writer.member("maxFailures", maxFailures)
        writer.member("inLockout", inLockout)
        try writer.member("retryAfterSeconds", retryAfterSeconds)
        writer.member("problem", problem)
        writer.member("warning", warning)
        writer.member("stateAnchor", stateAnchor)
        writer.endObject()
    }
}

extension CheckReply: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        try writer.member("decision", decision)
        writer.endObject()
    }
}

extension StorageGetReply: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("value", value)
        writer.endObject()
    }
}

extension TokenCodeReply: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("serial", serial)
        writer.member("code", code)
        writer.member("next", next)
        writer.member("secondsLeft", secondsLeft)
        writer.member("interval", interval)
        writer.endObject()
    }
}

extension IdentityTokenReply: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("domain", domain)
        writer.member("provider", provider)
        writer.member("accessToken", accessToken)
        writer.member("tokenType", tokenType)
        try writer.member("expiresAt", expiresAt)
        writer.endObject()
    }
}

extension CordonDecision: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.member("allowed", allowed)
        writer.member("action", action.rawValue)
        writer.member("reason", reason)
        writer.member("truncateTo", truncateTo)
        writer.member("rules", rules)
        writer.endObject()
    }
}
