import CNATS

/// A NATS failure: what was attempted, the library's status and, where the server answered, its
/// JetStream error code and text.
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted (`connect nats://…`, `publish cordon.fleet.cmd.…`).
    public var operation: String
    /// The library's status name (`natsStatus_GetText`).
    public var status: String
    /// The status as a number (`NATS_OK` is 0), for checks such as "not found".
    public var code: Int32
    /// The JetStream error code the server answered with, 0 when none.
    public var jetStreamCode: Int32
    /// The library's last error text, when it says more than the status.
    public var detail: String?

    /// A failure the caller detected itself: `detail` says what, instead of the library's last error.
    init(_ operation: String, _ status: natsStatus, detail: String, jetStream: Int32 = 0) {
        self.operation = operation
        self.code = Int32(status.rawValue)
        self.status = String(cString: natsStatus_GetText(status))
        self.jetStreamCode = jetStream
        self.detail = detail
    }

    init(_ operation: String, _ status: natsStatus, jetStream: jsErrCode = jsErrCode(rawValue: 0)) {
        self.operation = operation
        self.code = Int32(status.rawValue)
        self.status = String(cString: natsStatus_GetText(status))
        self.jetStreamCode = Int32(jetStream.rawValue)
        var last = NATS_OK
        if let text = nats_GetLastError(&last) {
            let message = String(cString: text)
            detail = message.isEmpty || message == self.status ? nil : message
        }
    }

    /// The thing asked for is not there (a subject with no message).
    public var isNotFound: Bool { code == Int32(NATS_NOT_FOUND.rawValue) }

    /// The connection was closed (by `close()`, or for good by the library).
    public var isClosed: Bool { code == Int32(NATS_CONNECTION_CLOSED.rawValue) }

    public var description: String {
        var text = "\(operation): \(status)"
        if let detail { text += " (\(detail))" }
        if jetStreamCode != 0 { text += " [JetStream error \(jetStreamCode)]" }
        return text
    }
}
