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

    /// Removes the store's directory.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    // MARK: PolicyProvider

    func policyApplied() { policyAppliedCount += 1 }

    // MARK: LifecycleDriver

    func run(_ input: LifecycleInput, request: LifecycleRequest?) {
        inputs.append(input)
        if let request { requests.append(request) }
        if !inputWaiters.isEmpty { inputWaiters.removeFirst().succeed(input) }
    }

    private var inputWaiters: [EventLoopPromise<LifecycleInput>] = []

    /// The next input a component feeds the lifecycle (work on the store pool ends with one).
    func nextInput() -> EventLoopFuture<LifecycleInput> {
        let promise = loop.makePromise(of: LifecycleInput.self)
        inputWaiters.append(promise)
        return promise.futureResult
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

    func bindSubscriber(token: String, connection: AgentConnection) throws(CordonError) {}
    func recordEnforcement(_ id: ConnectionID, _ action: EnforcementAction) {}
    func appKeyRevokedForPosture(_ appId: String) {}
    func appKeyReturnedForPosture(_ appId: String) {}
    func closeConnection(_ id: ConnectionID) { closed.append(id) }

    // MARK: KeySource

    private let custody = KeyCustody()

    func appKey(for appId: String) -> SecureBytes? {
        master.map { custody.appKey(master: $0, appId: appId, generation: 0) }
    }

    func setAppGeneration(_ appId: String, _ generation: Int) {}

    func purposeKey(_ purpose: [String]) -> SecureBytes? {
        master.map { custody.purposeKey(master: $0, purpose: purpose) }
    }

    // MARK: EventSink, AppDataWiper

    func subscriber(_ id: ConnectionID) -> Subscriber? { nil }
    func deliver(_ frame: ByteBuffer, to subscriber: Subscriber) {}
    func subscriberBound(_ id: ConnectionID) {}
    func wipeAppData(_ appId: String, reason: String) -> EventLoopFuture<Void> { loop.makeSucceededVoidFuture() }
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
        _ method: Method, _ parameters: [String: JSONValue] = [:], from id: ConnectionID = 1,
        _ serve: @escaping @Sendable (Component, ComponentCall) throws -> CallOutcome
    ) async throws -> JSONValue {
        let bound = self.bound
        let future = try await loop.submit { () -> EventLoopFuture<ByteBuffer> in
            guard let connection = bound.value.connections[id] else { throw FixtureError.noConnection(id) }
            let encoder = ReplyEncoder(allocator: ByteBufferAllocator())
            let bytes = try VarlinkCodec().encodeBytes(VarlinkCall(method: method.rawValue, parameters: parameters))
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
        var frame = try await future.get()
        let bytes = frame.readBytes(length: frame.readableBytes) ?? []
        // A frame ends with its NUL terminator.
        return try JSONDecoder().decode(JSONValue.self, from: Data(bytes.prefix { $0 != 0 }))
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
}

/// Keeps the context of the channel it is added to (an `AgentConnection` needs one).
final class ContextGrabber: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private(set) var context: ChannelHandlerContext?
    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
}
