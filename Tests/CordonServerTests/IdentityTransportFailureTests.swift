import CordonIdentity
import CordonProtocol
import Foundation
import NIOCore
import Testing

@testable import CordonServer

/// Issue #32, item 4: what a user reads when a provider cannot be reached, against real sockets —
/// a port nothing listens on, a listener that never accepts (with a short limit injected), a
/// server that does not speak TLS (the authlib provider, plain HTTP, asked over https) — and an
/// authlib provider's OAuth error with its HTTP status. One clause each, the cause as the system
/// reported it, and the CLI's one sentence with its hint.
@Suite struct IdentityTransportFailureTests {
    static func request(_ url: String) -> ProviderRequest {
        ProviderRequest(url: url, step: .token, form: [FormField("grant_type", "refresh_token")])
    }

    static func failure(_ url: String, transport: IdentityTransport = IdentityTransport()) async -> IdentityError? {
        do {
            _ = try await transport.post(request(url), provider: "corp")
            return nil
        } catch {
            return error
        }
    }

    /// The sentence and hint `cordon` prints for `error`.
    static func printed(_ error: IdentityError) -> ErrorText { error.cordonError.text }

    @Test func aRefusedConnectionIsCalledRefused() async throws {
        let port = try Self.unusedPort()
        let error = try #require(await Self.failure("http://127.0.0.1:\(port)/token"))
        #expect(
            error
                == .unreachable(
                    provider: "corp", step: .token, reason: "the connection to 127.0.0.1:\(port) was refused"))
        let text = Self.printed(error)
        #expect(
            text.message
                == "the sign-in with corp failed at the token request: the connection to 127.0.0.1:\(port) was refused")
        #expect(text.hint.contains("`cordon login` again"))
    }

    /// Issue #31: the refusal is the answer, not a reason to retry until the connect timeout
    /// (AsyncHTTPClient's `retryConnectionEstablishment`). With limits of an hour, a transport
    /// that retried would hold the test until its time limit.
    @Test(.timeLimit(.minutes(1))) func aRefusedConnectionFailsAtOnceWhateverTheConnectTimeout() async throws {
        let port = try Self.unusedPort()
        var transport = IdentityTransport()
        transport.connectTimeout = .hours(1)
        transport.requestTimeout = .hours(1)
        let error = try #require(await Self.failure("http://127.0.0.1:\(port)/token", transport: transport))
        #expect(
            error
                == .unreachable(
                    provider: "corp", step: .token, reason: "the connection to 127.0.0.1:\(port) was refused"))
    }

    /// A connect that gets no answer at all (a listener whose queue is full: the kernel drops
    /// the SYN) still ends at the connect timeout, naming it.
    @Test func aConnectThatHangsEndsAtTheConnectTimeout() async throws {
        let listener = try NeverAcceptingListener(backlog: 0)
        let filler = try listener.fillQueue()
        defer { close(filler) }
        var transport = IdentityTransport()
        transport.connectTimeout = .milliseconds(200)
        let error = try #require(await Self.failure("http://127.0.0.1:\(listener.port)/token", transport: transport))
        #expect(
            error
                == .unreachable(
                    provider: "corp", step: .token,
                    reason: "connecting to 127.0.0.1:\(listener.port) timed out after 0.2 s"),
            "\(error)")
    }

    @Test func aServerThatNeverAnswersTimesOutNamingTheLimit() async throws {
        let listener = try NeverAcceptingListener()
        var transport = IdentityTransport()
        transport.requestTimeout = .milliseconds(200)
        let error = try #require(await Self.failure("http://127.0.0.1:\(listener.port)/token", transport: transport))
        #expect(
            error
                == .unreachable(
                    provider: "corp", step: .token, reason: "127.0.0.1:\(listener.port) did not answer within 0.2 s"),
            "\(error)")
    }

    /// `openssl s_server` with a self-signed certificate, as curl sees it ("self-signed
    /// certificate"): the TLS failure and BoringSSL's reason.
    @Test func aTLSFailureGivesItsReason() async throws {
        let server = try SelfSignedTLSServer()
        let error = try #require(await Self.failure("https://127.0.0.1:\(server.port)/token"))
        #expect(
            error
                == .unreachable(
                    provider: "corp", step: .token,
                    reason: "TLS with 127.0.0.1:\(server.port) failed: its certificate is not trusted "
                        + "(CERTIFICATE_VERIFY_FAILED: self-signed, unknown issuer or expired)"),
            "\(error)")
    }

    @Test func theProvidersErrorComesWithItsHTTPStatus() async throws {
        let provider = try IdentityProviderPeer()
        var grant = DeviceGrant(
            provider: ProviderConfiguration(
                name: "corp", clientID: "nobody", scopes: ["openid"], flow: .device,
                deviceAuthorizationEndpoint: provider.base + "/device_authorization", authorizationEndpoint: nil,
                tokenEndpoint: provider.base + "/token", revocationEndpoint: nil))
        guard case .send(let request) = grant.start().first else {
            Issue.record("the grant sent nothing")
            return
        }
        let answer = try await IdentityTransport().post(request, provider: "corp")
        guard case .fail(let error) = grant.receive(status: answer.status, body: answer.body, now: 0).first,
            case .providerError(_, .deviceAuthorization, "invalid_client", _, let status?) = error
        else {
            Issue.record("not invalid_client: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            return
        }
        #expect(status == answer.status && (400..<500).contains(status))
        #expect(
            Self.printed(error).message.hasPrefix(
                "the sign-in with corp failed at the device authorization request: "
                    + "the provider answered HTTP \(status) with error invalid_client"),
            "\(Self.printed(error).message)")
    }

    /// A port on 127.0.0.1 that was bound and closed: nothing listens there.
    static func unusedPort() throws -> Int {
        let listener = try NeverAcceptingListener()
        return listener.port
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts: the kernel completes connections
/// into its backlog, and nothing ever answers. Closed when released.
final class NeverAcceptingListener {
    let descriptor: Int32
    let port: Int

    /// Listens with room for `backlog` connections in its queue (Linux holds one more).
    init(backlog: Int32 = 8) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, backlog) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects until the queue is full: a connection that completes is left there, unaccepted;
    /// returns the one that did not complete within 100 ms, still connecting (the caller closes it).
    func fillQueue() throws -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        for _ in 0..<64 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard client >= 0 else { throw POSIXError(.EMFILE) }
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            // The kernel answers a SYN to a listener with room at once; to a full one, never.
            var entry = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 100) == 0 { return client }
            filled.append(client)
        }
        throw POSIXError(.EAGAIN)
    }

    /// The connections `fillQueue` left in the queue.
    private var filled: [Int32] = []

    deinit {
        for client in filled { close(client) }
        close(descriptor)
    }
}

/// `openssl s_server -www` on 127.0.0.1 with a certificate it signed itself, made for the test;
/// ready once it printed `ACCEPT`, ended with the test.
final class SelfSignedTLSServer {
    let directory: String
    let port: Int
    private let process = Process()
    private let input = Pipe()

    init() throws {
        directory = NSTemporaryDirectory() + "cordon-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        make.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
            "/CN=127.0.0.1", "-days", "1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
        ]
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        guard make.terminationStatus == 0 else { throw POSIXError(.EIO) }
        port = try NeverAcceptingListener().port
        let output = Pipe()
        // Unbuffered (stdbuf): `ACCEPT` reaches the pipe as soon as it listens.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = [
            "-o0", "/usr/bin/openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/cert.pem",
            "-key",
            directory + "/key.pem", "-www",
        ]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        // `availableData` returns what the pipe holds (a `read(upToCount:)` would wait for all 64).
        while !text.contains("ACCEPT") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard text.contains("ACCEPT") else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        try? input.fileHandleForWriting.close()
        // s_server outlives SIGTERM while it serves; SIGKILL ends it.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
