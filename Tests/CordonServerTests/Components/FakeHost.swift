import CordonLifecycle
import CordonPolicy
import CordonProtocol
import CordonSecrets
import CordonStore
import CordonSystem
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix

@testable import CordonServer

/// Every capability a component may ask of its host (`ComponentHost`), with no agent behind it:
/// a real temporary SQLite store and store pool, the policy the test gives, and everything else
/// scripted or recorded — the registrations a call verifies as, the lifecycle's state and every
/// input a component feeds it, the audit records, the decisions. Components are unit-tested
/// against it, one at a time (docs/ARCHITECTURE.md, "Components").
///
/// Lives on `loop` like the agent: tests reach it through ``ComponentFixture``.
final class FakeHost: ComponentHost {
    let loop: any EventLoop
    var configuration: AgentConfiguration
    let logger = Logger(label: "fake-host")
    var now: Double = 1_000_000
    var clock: @Sendable () -> Double { { [now] in now } }
    let database: CordonDatabase
    let storePool: NIOThreadPool
    let directory: String

    // MARK: Scripted

    var policy: PolicyEvaluator
    var lifecycleState: LifecycleState = .unlocked
    var lastSeq = 1
    /// The machine `lifecycle` shows (a test feeds it to reach a state: a check in flight).
    var lifecycle = LifecycleMachine(configuration: .builtin)
    var isShuttingDown = false
    /// The registrations verified calls act as, by connection.
    var registrations: [ConnectionID: AppRegistration] = [:]
    /// The master key while "held": app and purpose keys derive from it.
    var master: SecureBytes? = SecureBytes(copying: Array(repeating: UInt8(7), count: 32))

    // MARK: Recorded

    private(set) var inputs: [LifecycleInput] = []
    private(set) var requests: [LifecycleRequest] = []
    private(set) var audit: [AuditEntry] = []
    private(set) var decisions: [PolicyDecision] = []
    private(set) var closed: [ConnectionID] = []
    private(set) var policyAppliedCount = 0
    /// What enforcement recorded of each app (also set in `registry`, as the agent does).
    private(set) var enforcements: [(ConnectionID, EnforcementAction)] = []
    /// The subscribers bound to a registration by its token, and those told they got their snapshot.
    private(set) var boundSubscribers: [ConnectionID] = []
    private(set) var subscribersBound: [ConnectionID] = []
    /// The frames components handed to `deliver`, with the connection of their subscriber.
    private(set) var delivered: [(ConnectionID, ByteBuffer)] = []
    /// The apps whose data a component asked to wipe, and the apps whose key posture revoked.
    private(set) var wiped: [String] = []
    private(set) var revokedForPosture: [String] = []
    /// Objects a test's component holds `unowned` (a narrower host wrapping this one), kept alive here.
    var retained: [AnyObject] = []

    init(loop: any EventLoop, storePool: NIOThreadPool, documents: [(PolicyDocument, PolicySource)] = []) throws {
        self.loop = loop
        self.storePool = storePool
        directory = NSTemporaryDirectory() + "cordon-fake-host-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let paths = CordonPaths(
            runtimeDirectory: directory + "/run", dataDirectory: directory + "/data",
            configDirectory: directory + "/config")
        try FileManager.default.createDirectory(atPath: paths.dataDirectory, withIntermediateDirectories: true)
        database = try CordonDatabase(path: paths.dataDirectory + "/cordon.sqlite")
        configuration = AgentConfiguration(paths: paths, insecureFastKDF: true, allowedUID: getuid())
        configuration.softwareOnlyPasscodeDefaults = false
        policy = PolicyEvaluator(
            EffectivePolicy.merge(documents, fallback: (BuiltinPolicy.document, BuiltinPolicy.source)))
    }

    /// Registers `registration` both ways a component may look it up: as the registration its
    /// connection's calls verify as, and in `registry`.
    func register(_ registration: AppRegistration) throws {
        registrations[registration.connection] = registration
        try registry.register(registration)
    }

    /// Removes the store's directory.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    // MARK: PolicyStaleGate

    /// What `conditions.policyStale: block` denies every decision with (scripted).
    var policyStaleBlock: PolicyStaleBlock?

    // MARK: PolicyProvider

    func policyApplied() { policyAppliedCount += 1 }

    // MARK: LifecycleDriver

    func run(_ input: LifecycleInput, request: LifecycleRequest?) {
        inputs.append(input)
        if let request { requests.append(request) }
        if !inputWaiters.isEmpty { inputWaiters.removeFirst().succeed(input) }
    }

    private var inputWaiters: [EventLoopPromise<LifecycleInput>] = []

    /// Fails every wait for an input still pending (`FixtureError.noInput`).
    func failInputWaiters() {
        let waiting = inputWaiters
        inputWaiters = []
        for promise in waiting { promise.fail(FixtureError.noInput) }
    }

    /// The next input a component feeds the lifecycle (work on the store pool ends with one).
    func nextInput() -> EventLoopFuture<LifecycleInput> {
        let promise = loop.makePromise(of: LifecycleInput.self)
        inputWaiters.append(promise)
        return promise.futureResult
    }

    private var answered = 0

    /// Answers the oldest request no one answered yet as the machine would: with the empty reply
    /// (an authorized passcode check, a success), or with `error`.
    func answerRequest(with error: CordonError? = nil) {
        guard answered < requests.count else { return }
        let request = requests[answered]
        answered += 1
        request.promise.succeed(error.map { request.encoder.error($0.varlinkError) } ?? request.encoder.empty())
    }

    func snapshot() -> CordonEvent {
        CordonEvent(seq: lastSeq, payload: .state, reason: .startup, time: now, state: lifecycleState)
    }

    // MARK: AuditSink

    func writeAudit(_ records: [AuditEntry], onDisk: Bool) -> EventLoopFuture<Void> {
        audit += records
        return loop.makeSucceededVoidFuture()
    }

    func auditStored() -> EventLoopFuture<Void> { loop.makeSucceededVoidFuture() }

    /// Records a routine read's records at once (the real log stores them after the reply).
    func auditAfterReply(_ records: [AuditEntry]) -> EventLoopFuture<Void>? {
        audit += records
        return nil
    }

    // MARK: Decider (the real policy decides; the fake records)

    func appFacts(of connection: AgentConnection) -> AppFacts {
        let registration = registrations[connection.id]
        return AppFacts(id: registration?.appId ?? "", managed: registration?.managed ?? false)
    }

    func isManagedByPolicy(_ appId: String) -> Bool { policy.compiled.isManaged(appId) }

    func decide(
        _ action: PolicyAction, app: AppFacts, peer: AppFacts?, length: Int?, contentType: String?, location: String?
    ) -> PolicyDecision {
        let decision = policy.decide(
            DecisionRequest(
                action: action, app: app, peer: peer, location: location, contentType: contentType, length: length))
        decisions.append(decision)
        return decision
    }

    func denial(_ decision: PolicyDecision) -> CordonError {
        .denied(action: decision.action.rawValue, reason: decision.reason, rules: decision.rules.map(\.description))
    }

    func decisionRequest(action name: String, app: AppFacts, target: String?, context: [String: String]?)
        throws(CordonError) -> DecisionRequest
    {
        guard let action = PolicyAction(rawValue: name) else { throw .unknownAction(action: name) }
        return DecisionRequest(action: action, app: app, peer: nil, location: target, contentType: nil, length: nil)
    }

    // MARK: RegistrationVerifier

    var registry = AppRegistry()

    func verifiedRegistration(token: String?, caller: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        try verifiedRegistration(caller, for: use)
    }

    func verifiedRegistration(_ connection: AgentConnection, for use: RegistrationUse) throws(CordonError)
        -> AppRegistration
    {
        guard let registration = registrations[connection.id] else { throw .notRegistered }
        guard registration.managed else { throw .notManaged(appId: registration.appId) }
        return registration
    }

    /// Binds for real in `registry` (the token must name a registration of the same process).
    func bindSubscriber(token: String, connection: AgentConnection) throws(CordonError) {
        try registry.bindSubscriber(token: token, subscriber: connection.id, pid: Int(connection.identity.pid))
        boundSubscribers.append(connection.id)
    }

    func recordEnforcement(_ id: ConnectionID, _ action: EnforcementAction) {
        registry.enforced(id, action)
        enforcements.append((id, action))
    }

    func appKeyRevokedForPosture(_ appId: String) { revokedForPosture.append(appId) }
    func appKeyReturnedForPosture(_ appId: String) {}
    func closeConnection(_ id: ConnectionID) { closed.append(id) }

    // MARK: KeySource

    private let custody = KeyCustody()

    func appKey(for appId: String) -> SecureBytes? {
        master.map { custody.legacyAppKey(master: $0, appId: appId, generation: 0) }
    }

    func destroyingAppKey(_ appId: String) {}
    func appKeyDestroyed(_ appId: String, failed: Bool) {}

    func purposeKey(_ purpose: [String]) -> SecureBytes? {
        master.map { custody.purposeKey(master: $0, purpose: purpose) }
    }

    // MARK: EventSink, AppDataWiper

    func subscriber(_ id: ConnectionID) -> Subscriber? { nil }
    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) { delivered.append((subscriber.connection.id, frame)) }
    func subscriberBound(_ id: ConnectionID) { subscribersBound.append(id) }
    func wipeAppData(_ appId: String, reason: String) -> EventLoopFuture<Void> {
        wiped.append(appId)
        return loop.makeSucceededVoidFuture()
    }
}

/// A component under test with its fake host, made and used on the host's loop: the test reaches
/// it through `run`, which hops onto the loop and back.
final class ComponentFixture<Component>: Sendable {
    private let bound:
        NIOLoopBound<(host: FakeHost, component: Component, connections: [ConnectionID: AgentConnection])>
    let loop: any EventLoop
    private let group: MultiThreadedEventLoopGroup
    private let pool: NIOThreadPool

    private init(
        bound: NIOLoopBound<(host: FakeHost, component: Component, connections: [ConnectionID: AgentConnection])>,
        loop: any EventLoop, group: MultiThreadedEventLoopGroup, pool: NIOThreadPool
    ) {
        self.bound = bound
        self.loop = loop
        self.group = group
        self.pool = pool
    }

    /// Makes the host and the component on a loop of their own, then runs `body` and stops both.
    static func with<R: Sendable>(
        documents: [(PolicyDocument, PolicySource)] = [],
        configure: @escaping @Sendable (FakeHost) -> Void = { _ in },
        make: @escaping @Sendable (FakeHost) throws -> Component,
        _ body: (ComponentFixture<Component>) async throws -> R
    ) async throws -> R {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let loop = group.next()
        let bound = try await loop.submit {
            let host = try FakeHost(loop: loop, storePool: pool, documents: documents)
            configure(host)
            // Two connections, on channels of their own (only their allocators and ids are used).
            var connections: [ConnectionID: AgentConnection] = [:]
            for id in [1, 2] as [ConnectionID] {
                let channel = EmbeddedChannel()
                let grabber = ContextGrabber()
                try channel.pipeline.syncOperations.addHandler(grabber)
                guard let context = grabber.context else { throw FixtureError.noContext }
                connections[id] = AgentConnection(
                    id: id, identity: PeerIdentity(pid: 100 + Int32(id), uid: getuid(), gid: getgid(), executable: ""),
                    pidfd: nil, context: context)
            }
            return NIOLoopBound((host: host, component: try make(host), connections: connections), eventLoop: loop)
        }.get()
        let fixture = ComponentFixture(bound: bound, loop: loop, group: group, pool: pool)
        do {
            let result = try await body(fixture)
            try await fixture.stop()
            return result
        } catch {
            try? await fixture.stop()
            throw error
        }
    }

    /// Runs `body` on the loop with the host, the component and the test connections.
    func run<T: Sendable>(
        _ body: @escaping @Sendable (FakeHost, Component, [ConnectionID: AgentConnection]) throws -> T
    ) async throws -> T {
        let bound = self.bound
        return try await loop.submit { try body(bound.value.host, bound.value.component, bound.value.connections) }
            .get()
    }

    /// Calls one method the way the router does, and waits for its reply's JSON.
    func call(
        _ method: Method, _ parameters: [String: JSONValue] = [:], from id: ConnectionID = 1, more: Bool = false,
        _ serve: @escaping @Sendable (Component, ComponentCall) throws -> CallOutcome
    ) async throws -> JSONValue {
        let bound = self.bound
        let future = try await loop.submit { () -> EventLoopFuture<ByteBuffer> in
            guard let connection = bound.value.connections[id] else { throw FixtureError.noConnection(id) }
            let encoder = ReplyEncoder(allocator: ByteBufferAllocator())
            let bytes = try VarlinkCodec().encodeBytes(
                VarlinkCall(method: method.rawValue, parameters: parameters, more: more))
            let message = try VarlinkCodec().decodeCall(bytes)
            let call = ComponentCall(method: method, message: message, connection: connection, encoder: encoder)
            let outcome: CallOutcome
            do {
                outcome = try serve(bound.value.component, call)
            } catch let error as VarlinkError {
                outcome = .reply(encoder.error(error))
            }
            switch outcome {
            case .reply(let frame), .close(let frame): return bound.value.host.loop.makeSucceededFuture(frame)
            case .deferred(let future): return future
            case .streaming: return bound.value.host.loop.makeSucceededFuture(encoder.empty())
            }
        }.get()
        return try Self.json(try await future.get())
    }

    /// Calls a method that needs the passcode checked by the lifecycle machine (`authorized`):
    /// returns the input the call fed the machine, and the reply once the fake machine answered
    /// the request — with `error`, or as an authorized check. A call answered without feeding the
    /// machine anything throws `FixtureError.notAuthorizing` with its reply.
    func callAuthorized(
        _ method: Method, _ parameters: [String: JSONValue] = [:], from id: ConnectionID = 1,
        answer error: CordonError? = nil,
        _ serve: @escaping @Sendable (Component, ComponentCall) throws -> CallOutcome
    ) async throws -> (input: LifecycleInput, reply: JSONValue) {
        let next = try await run { host, _, _ in host.nextInput() }
        let reply = Task { [self] in
            let reply: JSONValue
            do {
                reply = try await call(method, parameters, from: id, serve)
            } catch {
                _ = try? await run { host, _, _ in host.failInputWaiters() }
                throw error
            }
            // Answered: no input is coming any more if none came.
            _ = try? await run { host, _, _ in host.failInputWaiters() }
            return reply
        }
        let input: LifecycleInput
        do {
            input = try await next.get()
        } catch {
            throw FixtureError.notAuthorizing(try await reply.value)
        }
        try await run { host, _, _ in host.answerRequest(with: error) }
        return (input, try await reply.value)
    }

    /// The JSON of one varlink frame (it ends with its NUL terminator).
    static func json(_ frame: ByteBuffer) throws -> JSONValue {
        let bytes = Array(frame.readableBytesView)
        return try JSONDecoder().decode(JSONValue.self, from: Data(bytes.prefix { $0 != 0 }))
    }

    /// The frames written to connection `id`'s channel so far (a subscriber's events), as JSON.
    func written(to id: ConnectionID) async throws -> [JSONValue] {
        let bound = self.bound
        let frames = try await loop.submit { () -> [ByteBuffer] in
            guard let channel = bound.value.connections[id]?.channel as? EmbeddedChannel else {
                throw FixtureError.noConnection(id)
            }
            var frames: [ByteBuffer] = []
            while let frame = try channel.readOutbound(as: ByteBuffer.self) { frames.append(frame) }
            return frames
        }.get()
        // A write may hold several frames: split at each NUL.
        return try frames.flatMap { frame in
            try Array(frame.readableBytesView).split(separator: 0).map {
                try JSONDecoder().decode(JSONValue.self, from: Data($0))
            }
        }
    }

    private func stop() async throws {
        try await run { host, _, _ in host.remove() }
        try await pool.shutdownGracefully()
        try await group.shutdownGracefully()
    }
}

/// What a fixture cannot set up.
enum FixtureError: Error {
    case noContext
    case noConnection(ConnectionID)
    /// No input came for the lifecycle.
    case noInput
    /// A call expected to wait for the passcode check was answered without one.
    case notAuthorizing(JSONValue)
}

/// Keeps the context of the channel it is added to (an `AgentConnection` needs one).
final class ContextGrabber: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private(set) var context: ChannelHandlerContext?
    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
}

extension JSONValue {
    /// This value decoded as `type` (a reply's parameters as the wire type they encode).
    func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: JSONEncoder().encode(self))
    }
}

/// A temporary directory with its real path (`/tmp` may be a symbolic link), removed on deinit.
final class TemporaryTree: Sendable {
    let root: String

    init() throws {
        let made = NSTemporaryDirectory() + "cordon-tree-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        root = URL(fileURLWithPath: made).resolvingSymlinksInPath().path
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func directory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/" + path, withIntermediateDirectories: true)
    }

    /// Writes `contents` at `path` under the root, making its directories.
    func write(_ path: String, _ contents: String) throws {
        try write(path, Array(contents.utf8))
    }

    func write(_ path: String, _ bytes: [UInt8]) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
    }
}

/// A narrower fake host for a component whose `Host` adds hooks of its own: the environment and
/// the lifecycle forwarded to the `FakeHost` it wraps (kept alive in `base.retained`).
class ForwardingHost: LifecycleDriver {
    let base: FakeHost
    init(_ base: FakeHost) { self.base = base }

    var loop: any EventLoop { base.loop }
    var configuration: AgentConfiguration { base.configuration }
    var logger: Logger { base.logger }
    var clock: @Sendable () -> Double { base.clock }
    var database: CordonDatabase { base.database }
    var storePool: NIOThreadPool { base.storePool }
    var lifecycleState: LifecycleState { base.lifecycleState }
    var lastSeq: Int { base.lastSeq }
    var lifecycle: LifecycleMachine { base.lifecycle }
    var isShuttingDown: Bool { base.isShuttingDown }
    func run(_ input: LifecycleInput, request: LifecycleRequest?) { base.run(input, request: request) }
    func snapshot() -> CordonEvent { base.snapshot() }
}
