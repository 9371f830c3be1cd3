import CordonProtocol
import NIOCore

extension AppRegistrations {
    /// The audit action of a pinned-channel connection a policy change cut.
    static let channelCutAction = "network.cut"

    /// `ReportChannelCuts`: the connections of a registered app's pinned channel (CordonKit's
    /// `SecureChannel`, `cordon run --tunnel`) that a new policy cut, each written to the audit
    /// log under the registered app's id; answered once they are stored (docs/ARCHITECTURE.md,
    /// "Pinned channel"). The cut itself happens in the app, which alone holds the connections:
    /// the record is what the registered process reports, never attributed to another app.
    func serveReportChannelCuts(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(ReportChannelCutsParameters.self)
        if let parameter = parameters.invalidParameter { throw .invalidParameter(parameter) }
        let registration = try typed { () throws(CordonError) in
            try liveRegistration(token: parameters.token, caller: call.connection)
        }
        let now = host.clock()
        let records = parameters.cuts.map { cut in
            AuditEntry(
                time: now, category: .enforcement, appId: registration.appId, action: Self.channelCutAction,
                outcome: "cut", reason: "the connection to \(cut.host) was cut when the policy changed: \(cut.reason)")
        }
        logger.notice(
            "pinned-channel connections cut by a policy change",
            metadata: ["appId": "\(registration.appId)", "count": "\(records.count)"])
        let encoder = call.encoder
        return .deferred(host.writeAudit(records, onDisk: true).map { encoder.empty() })
    }
}
