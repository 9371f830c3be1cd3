import CNATS
import CordonLocking
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to NATS through the official C client (nats.c): core publish and subscribe, and
/// the JetStream calls the fleet uses (a stream, a publish acknowledged by the stream, the last
/// message of a subject). The library is thread-safe and calls back on its own threads; handlers
/// must hand their work on (to an actor or a loop) and return.
public final class NATSConnection: Sendable {
    /// A received message's subject and bytes (copied out of the library's buffer).
    public struct Message: Sendable, Equatable {
        public var subject: String
        public var data: [UInt8]

        public init(subject: String, data: [UInt8]) {
            self.subject = subject
            self.data = data
        }
    }

    /// `natsConnection *` and `jsCtx *`, owned here and destroyed in `close()`.
    private struct Handles: @unchecked Sendable {
        var connection: OpaquePointer
        var jetStream: OpaquePointer?
    }

    private let handles: Locked<Handles?>
    /// What the C callbacks reach through their `closure` pointer, and each subscription's handler:
    /// never freed (a few hundred bytes per connection). The library calls back on threads of its
    /// own, also after a connection it closed itself or one `close()` destroyed (its `closed`
    /// callback may come later), so no moment is safe to free them at.
    private let callbacks: Unmanaged<Callbacks>
    /// The subscriptions, each destroyed once by `close()`.
    private let subscriptions = Locked<[Subscription]>([])
    /// Where this connection's requests get their replies (subscribed at the first request).
    private let replies: NATSReplyInbox
    private let repliesSubscribed = Locked(false)

    /// Connects (or, with `retryFirstConnect`, starts trying in the background).
    public init(_ options: NATSOptions, onEvent: @escaping @Sendable (NATSEvent) -> Void = { _ in })
        throws(NATSError)
    {
        let callbacks = Unmanaged.passRetained(Callbacks(options: options, onEvent: onEvent))
        var opts: OpaquePointer?
        var status = natsOptions_Create(&opts)
        guard status == NATS_OK, let opts else {
            throw NATSError("natsOptions_Create", status)
        }
        defer { natsOptions_Destroy(opts) }
        let context = callbacks.toOpaque()
        status = Self.configure(opts, options, context: context)
        guard status == NATS_OK else {
            throw NATSError("configure the connection to \(options.servers.joined(separator: ","))", status)
        }
        var connection: OpaquePointer?
        // A connection refused only because its nonce's signature could not be sent is made again
        // (a new connection, a new nonce): one in 256 signatures begins with a zero byte.
        for _ in 0..<8 {
            let unsendable = callbacks.takeUnretainedValue().unsendable.withLock { $0 }
            if let loop = options.eventLoop {
                status = loop.attach(opts)
                if status == NATS_OK { loop.run { status = natsConnection_Connect(&connection, opts) } }
            } else {
                status = natsConnection_Connect(&connection, opts)
            }
            guard status != NATS_OK, callbacks.takeUnretainedValue().unsendable.withLock({ $0 }) > unsendable
            else { break }
            // Not left to the background retry (`retryFirstConnect`): on an event loop the library
            // cannot make a connection's first attach from its reconnecting thread.
            if let pending = connection {
                natsConnection_Close(pending)
                natsConnection_Destroy(pending)
                connection = nil
            }
        }
        let pending = status == NATS_NOT_YET_CONNECTED && options.retryFirstConnect
        guard status == NATS_OK || pending, let connection else {
            throw NATSError("connect to \(options.servers.joined(separator: ","))", status)
        }
        var jetStream: OpaquePointer?
        status = natsConnection_JetStream(&jetStream, connection, nil)
        guard status == NATS_OK else {
            let error = NATSError("JetStream context", status)
            natsConnection_Close(connection)
            natsConnection_Destroy(connection)
            throw error
        }
        self.callbacks = callbacks
        replies = NATSReplyInbox(inboxPrefix: options.inboxPrefix)
        handles = Locked(Handles(connection: connection, jetStream: jetStream))
        if !pending { onEvent(.connected) }
    }

    private static func configure(_ opts: OpaquePointer, _ options: NATSOptions, context: UnsafeMutableRawPointer)
        -> natsStatus
    {
        var status = withCStrings(options.servers) {
            natsOptions_SetServers(opts, UnsafeMutablePointer(mutating: $0), Int32(options.servers.count))
        }
        if status == NATS_OK { status = natsOptions_SetName(opts, options.name) }
        if status == NATS_OK { status = natsOptions_SetTimeout(opts, Int64(options.connectTimeout * 1000)) }
        if status == NATS_OK { status = natsOptions_SetMaxReconnect(opts, -1) }
        if status == NATS_OK { status = natsOptions_SetCustomReconnectDelay(opts, reconnectDelay, context) }
        if status == NATS_OK, options.retryFirstConnect {
            status = natsOptions_SetRetryOnFailedConnect(opts, true, connected, context)
        }
        if status == NATS_OK, let nkey = options.nkey {
            status = natsOptions_SetNKey(opts, nkey, signNonce, context)
        }
        if status == NATS_OK, options.caFile != nil || options.servers.contains(where: { $0.hasPrefix("tls://") }) {
            status = natsOptions_SetSecure(opts, true)
        }
        if status == NATS_OK, let caFile = options.caFile {
            status = natsOptions_LoadCATrustedCertificates(opts, caFile)
        }
        if status == NATS_OK, let prefix = options.inboxPrefix {
            status = natsOptions_SetCustomInboxPrefix(opts, prefix)
        }
        if status == NATS_OK { status = natsOptions_SetDisconnectedCB(opts, disconnected, context) }
        if status == NATS_OK { status = natsOptions_SetReconnectedCB(opts, reconnected, context) }
        if status == NATS_OK { status = natsOptions_SetClosedCB(opts, closed, context) }
        if status == NATS_OK { status = natsOptions_SetErrorHandler(opts, asyncError, context) }
        return status
    }

    deinit { close() }

    /// Closes the connection and frees the library's objects; no handler runs once this returns.
    public func close() {
        guard
            let taken = handles.withLock({ value -> Handles? in
                defer { value = nil }
                return value
            })
        else { return }
        replies.close(NATSError("request", NATS_CONNECTION_CLOSED, detail: "the connection was closed"))
        for subscription in subscriptions.withLock({ $0 }) { subscription.destroy() }
        if let jetStream = taken.jetStream { jsCtx_Destroy(jetStream) }
        natsConnection_Close(taken.connection)
        natsConnection_Destroy(taken.connection)
    }

    private func withHandles<T>(_ operation: String, _ body: (Handles) throws(NATSError) -> T) throws(NATSError) -> T {
        let current = handles.withLock { $0 }
        guard let current else { throw NATSError(operation, NATS_CONNECTION_CLOSED) }
        return try body(current)
    }

    // MARK: Core NATS

    /// Publishes `data` on `subject` (core NATS: at most once, to whoever listens now).
    public func publish(_ subject: String, _ data: [UInt8]) throws(NATSError) {
        try withHandles("publish \(subject)") { handles throws(NATSError) in
            let status = data.withUnsafeBytes {
                natsConnection_Publish(handles.connection, subject, $0.baseAddress, Int32($0.count))
            }
            guard status == NATS_OK else { throw NATSError("publish \(subject)", status) }
        }
    }

    /// Waits until the server has processed everything sent so far.
    public func flush(timeout: Double = 5) throws(NATSError) {
        try withHandles("flush") { handles throws(NATSError) in
            let status = natsConnection_FlushTimeout(handles.connection, Int64(timeout * 1000))
            guard status == NATS_OK else { throw NATSError("flush", status) }
        }
    }

    /// Delivers every message on `subject` to `handler`, on the library's thread, until `close()`.
    public func subscribe(_ subject: String, handler: @escaping @Sendable (Message) -> Void) throws(NATSError) {
        try withHandles("subscribe \(subject)") { handles throws(NATSError) in
            let box = Unmanaged.passRetained(Subscription(handler: handler))
            var sub: OpaquePointer?
            let status = natsConnection_Subscribe(&sub, handles.connection, subject, deliver, box.toOpaque())
            guard status == NATS_OK, let sub else {
                box.release()
                throw NATSError("subscribe \(subject)", status)
            }
            box.takeUnretainedValue().handle.withLock { $0 = SubscriptionHandle(pointer: sub) }
            subscriptions.withLock { $0.append(box.takeUnretainedValue()) }
        }
    }

    /// Sends `data` to `subject` with a reply subject in this connection's inbox and waits up to
    /// `timeout` seconds for the reply (on the calling thread: never call it from a handler).
    func request(_ subject: String, _ data: [UInt8], timeout: Double, operation: String) throws(NATSError)
        -> NATSReplyInbox.Reply
    {
        try withHandles(operation) { handles throws(NATSError) -> NATSReplyInbox.Reply in
            try subscribeReplies(handles, operation: operation)
            guard let (reply, waiter) = replies.expect() else {
                throw NATSError(operation, NATS_CONNECTION_CLOSED, detail: "the connection was closed")
            }
            let status = data.withUnsafeBytes {
                natsConnection_PublishRequest(handles.connection, subject, reply, $0.baseAddress, Int32($0.count))
            }
            guard status == NATS_OK else {
                replies.forget(reply)
                throw NATSError(operation, status)
            }
            guard waiter.ready.wait(timeout: .now() + timeout) == .success, let result = waiter.reply.withLock({ $0 })
            else {
                replies.forget(reply)
                throw NATSError(operation, NATS_TIMEOUT, detail: "no reply within \(timeout) s")
            }
            return try result.get()
        }
    }

    private func subscribeReplies(_ handles: Handles, operation: String) throws(NATSError) {
        try repliesSubscribed.withLock { subscribed throws(NATSError) in
            guard !subscribed else { return }
            // Retained for the library's callbacks, which may come after `close()` (see `callbacks`).
            let context = Unmanaged.passRetained(replies).toOpaque()
            var sub: OpaquePointer?
            let status = natsConnection_Subscribe(&sub, handles.connection, replies.wildcard, deliverReply, context)
            guard status == NATS_OK, let sub else {
                Unmanaged<NATSReplyInbox>.fromOpaque(context).release()
                throw NATSError("\(operation): subscribe to the replies", status)
            }
            let subscription = Subscription(handler: { _ in })
            subscription.handle.withLock { $0 = SubscriptionHandle(pointer: sub) }
            subscriptions.withLock { $0.append(subscription) }
            subscribed = true
        }
    }

    // MARK: JetStream

    /// What a stream keeps.
    public struct StreamConfiguration: Sendable {
        public var name: String
        public var subjects: [String]
        /// Messages kept per subject (1: the last one, what a machine reads on reconnecting).
        public var maxMessagesPerSubject: Int64 = -1
        /// The largest message the stream accepts, in bytes (-1: the server's limit).
        public var maxMessageSize: Int32 = -1
        /// Kept in memory only (benchmarks) instead of on disk.
        public var inMemory = false

        public init(name: String, subjects: [String]) {
            self.name = name
            self.subjects = subjects
        }
    }

    /// Creates the stream, or updates it to `configuration` when it exists. Direct gets are allowed,
    /// so a reader permitted one subject's `$JS.API.DIRECT.GET.<stream>.<subject>` reads that alone.
    public func addStream(_ configuration: StreamConfiguration) throws(NATSError) {
        try withHandles("add stream \(configuration.name)") { handles throws(NATSError) in
            guard let jetStream = handles.jetStream else { throw NATSError("JetStream", NATS_ILLEGAL_STATE) }
            var config = jsStreamConfig()
            _ = jsStreamConfig_Init(&config)
            var errorCode = jsErrCode(rawValue: 0)
            var status = NATS_OK
            configuration.name.withCString { name in
                withCStrings(configuration.subjects) { subjects in
                    config.Name = name
                    config.Subjects = UnsafeMutablePointer(mutating: subjects)
                    config.SubjectsLen = Int32(configuration.subjects.count)
                    config.MaxMsgsPerSubject = configuration.maxMessagesPerSubject
                    config.MaxMsgSize = configuration.maxMessageSize
                    config.Storage = configuration.inMemory ? js_MemoryStorage : js_FileStorage
                    config.AllowDirect = true
                    var info: UnsafeMutablePointer<jsStreamInfo>?
                    status = js_AddStream(&info, jetStream, &config, nil, &errorCode)
                    if status != NATS_OK, errorCode == JSStreamNameExistErr {
                        errorCode = jsErrCode(rawValue: 0)
                        status = js_UpdateStream(&info, jetStream, &config, nil, &errorCode)
                    }
                    if let info { jsStreamInfo_Destroy(info) }
                }
            }
            guard status == NATS_OK else {
                throw NATSError("add stream \(configuration.name)", status, jetStream: errorCode)
            }
        }
    }

    /// Publishes `data` on `subject` and waits up to `timeout` seconds for the stream to store it;
    /// returns its sequence.
    @discardableResult
    public func publishToStream(_ subject: String, _ data: [UInt8], timeout: Double = 5) throws(NATSError) -> UInt64 {
        let operation = "publish \(subject) to its stream"
        let reply = try request(subject, data, timeout: timeout, operation: operation)
        if reply.status == "503" {
            throw NATSError(operation, NATS_NO_RESPONDERS, detail: "no stream keeps \(subject)")
        }
        return try JetStreamReply.sequence(of: reply.data, operation: operation)
    }

    /// The last message the stream holds on `subject`, or nil when it holds none; a request the
    /// server does not answer within `timeout` seconds (one it refused) is an error. A direct get:
    /// a reader permitted one subject's `$JS.API.DIRECT.GET.<stream>.<subject>` reads that alone.
    public func lastMessage(stream: String, subject: String, timeout: Double = 5) throws(NATSError) -> Message? {
        let operation = "read the last message of \(subject) in \(stream)"
        let reply = try request(
            "$JS.API.DIRECT.GET.\(stream).\(subject)", [], timeout: timeout, operation: operation)
        if reply.data.isEmpty, let status = reply.status {
            switch status {
            case "404": return nil
            case "503": throw NATSError(operation, NATS_NO_RESPONDERS, detail: "no stream \(stream) answers")
            default:
                throw NATSError(operation, NATS_ERR, detail: "\(status) \(reply.statusDescription ?? "")")
            }
        }
        return Message(subject: reply.messageSubject ?? subject, data: reply.data)
    }

    /// The subjects `stream` holds messages on that match `filter`, with how many each: the
    /// stream's index, read without reading a message.
    public func subjects(stream: String, filter: String = ">", timeout: Double = 5) throws(NATSError) -> [String:
        UInt64]
    {
        try withHandles("list the subjects of \(stream)") { handles throws(NATSError) -> [String: UInt64] in
            guard let jetStream = handles.jetStream else { throw NATSError("JetStream", NATS_ILLEGAL_STATE) }
            var options = jsOptions()
            _ = jsOptions_Init(&options)
            options.Wait = Int64(timeout * 1000)
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var jetStreamError = jsErrCode(0)
            let status = filter.withCString { text in
                options.Stream.Info.SubjectsFilter = text
                return js_GetStreamInfo(&info, jetStream, stream, &options, &jetStreamError)
            }
            guard status == NATS_OK, let info else {
                throw NATSError("list the subjects of \(stream)", status, jetStream: jetStreamError)
            }
            defer { jsStreamInfo_Destroy(info) }
            var out: [String: UInt64] = [:]
            if let subjects = info.pointee.State.Subjects, let list = subjects.pointee.List {
                for index in 0..<Int(subjects.pointee.Count) {
                    guard let subject = list[index].Subject else { continue }
                    out[String(cString: subject)] = list[index].Msgs
                }
            }
            return out
        }
    }

    static func copy(_ message: OpaquePointer) -> Message {
        let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return Message(subject: subject, data: []) }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) {
            Message(subject: subject, data: Array(UnsafeBufferPointer(start: $0, count: count)))
        }
    }
}

// MARK: Callbacks from the library's threads

/// The options and handlers the C callbacks reach through their `closure` pointer.
final class Callbacks: Sendable {
    let options: NATSOptions
    let onEvent: @Sendable (NATSEvent) -> Void
    /// Nonces whose signature was not sent (it begins with a zero byte: see `signNonce`).
    let unsendable = Locked(0)
    /// The last attempt was given up for such a nonce: the next one is made at once.
    let retryAtOnce = Locked(false)

    init(options: NATSOptions, onEvent: @escaping @Sendable (NATSEvent) -> Void) {
        self.options = options
        self.onEvent = onEvent
    }

    static func from(_ closure: UnsafeMutableRawPointer?) -> Callbacks? {
        closure.map { Unmanaged<Callbacks>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// `natsSubscription *`, owned by its `Subscription`.
struct SubscriptionHandle: @unchecked Sendable {
    var pointer: OpaquePointer
}

/// One subscription's handler, and its library object.
final class Subscription: Sendable {
    let handler: @Sendable (NATSConnection.Message) -> Void
    let handle = Locked<SubscriptionHandle?>(nil)

    init(handler: @escaping @Sendable (NATSConnection.Message) -> Void) {
        self.handler = handler
    }

    /// Unsubscribes and frees the library's object (before the connection is destroyed).
    func destroy() {
        guard
            let taken = handle.withLock({ value -> SubscriptionHandle? in
                defer { value = nil }
                return value
            })
        else { return }
        _ = natsSubscription_Unsubscribe(taken.pointer)
        natsSubscription_Destroy(taken.pointer)
    }
}

private func deliver(
    _ connection: OpaquePointer?, _ subscription: OpaquePointer?, _ message: OpaquePointer?,
    _ closure: UnsafeMutableRawPointer?
) {
    guard let message else { return }
    defer { natsMsg_Destroy(message) }
    guard let closure else { return }
    Unmanaged<Subscription>.fromOpaque(closure).takeUnretainedValue().handler(NATSConnection.copy(message))
}

private func reconnectDelay(_ connection: OpaquePointer?, _ attempts: Int32, _ closure: UnsafeMutableRawPointer?)
    -> Int64
{
    guard let callbacks = Callbacks.from(closure) else { return 1000 }
    let quick = callbacks.retryAtOnce.withLock { value in
        defer { value = false }
        return value
    }
    let delay = callbacks.options.reconnectDelay(
        attempt: Int(attempts), unit: Double.random(in: 0..<1), afterUnsendableNonce: quick)
    return Int64(delay * 1000)
}

private func signNonce(
    _ errorText: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ signature: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
    _ length: UnsafeMutablePointer<Int32>?, _ nonce: UnsafePointer<CChar>?, _ closure: UnsafeMutableRawPointer?
) -> natsStatus {
    guard let callbacks = Callbacks.from(closure), let signer = callbacks.options.signer, let nonce, let signature,
        let length
    else { return NATS_ERR }
    let message = Array(String(cString: nonce).utf8)
    guard NATSNKey.isNonce(message) else {
        if let errorText { errorText.pointee = strdup("the server's nonce is not a nonce; it is not signed") }
        return NATS_ERR
    }
    let signed = signer(message)
    // The C client (3.4) encodes a signature whose first byte is zero as no signature at all (it
    // takes the bytes for a C string), and the server refuses the connection as unauthenticated.
    // Ed25519 is deterministic: this nonce cannot be signed otherwise. Failing here instead makes
    // the client connect again, with a new nonce.
    guard signed.first != 0 else {
        callbacks.unsendable.withLock { $0 += 1 }
        callbacks.retryAtOnce.withLock { $0 = true }
        if let errorText {
            errorText.pointee = strdup(
                "the nonce's signature begins with a zero byte the client cannot send; reconnecting")
        }
        return NATS_ERR
    }
    // The library frees what it is given: malloc'd here.
    guard let buffer = malloc(max(signed.count, 1))?.assumingMemoryBound(to: UInt8.self) else { return NATS_NO_MEMORY }
    for (index, byte) in signed.enumerated() { buffer[index] = byte }
    signature.pointee = buffer
    length.pointee = Int32(signed.count)
    return NATS_OK
}

private func connected(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    Callbacks.from(closure)?.onEvent(.connected)
}

private func disconnected(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    Callbacks.from(closure)?.onEvent(.disconnected)
}

private func reconnected(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    Callbacks.from(closure)?.onEvent(.reconnected)
}

/// The library's last callback for a connection: the handlers are released here.
private func closed(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    Callbacks.from(closure)?.onEvent(.closed)
}

private func asyncError(
    _ connection: OpaquePointer?, _ subscription: OpaquePointer?, _ status: natsStatus,
    _ closure: UnsafeMutableRawPointer?
) {
    var text = String(cString: natsStatus_GetText(status))
    if let connection {
        var last: UnsafePointer<CChar>?
        _ = natsConnection_GetLastError(connection, &last)
        if let last, last.pointee != 0 { text = String(cString: last) }
    }
    Callbacks.from(closure)?.onEvent(.error(text))
}

/// Calls `body` with a C array of the strings (valid only during the call).
func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers = copies.map { UnsafePointer($0) }
    if pointers.isEmpty { pointers.append(nil) }  // A valid address even for no strings.
    return pointers.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { preconditionFailure("a non-empty array has an address") }
        return body(base)
    }
}
