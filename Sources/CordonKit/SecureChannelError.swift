/// Why `SecureChannel` or a `cordon run --tunnel` connection refused or failed
/// (docs/ARCHITECTURE.md, "Pinned channel").
///
/// Each case names what the policy or the server did: the host, the pattern and the policy file
/// and JSON pointer it comes from, the pins expected and the SPKI hashes the server showed, or the
/// chain and host-name failure. No case carries key material.
public enum SecureChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where a timeout struck.
    public enum Stage: String, Sendable, Equatable {
        case connect, handshake, response
    }

    /// The URL is not `https://host[:port]/path`.
    case invalidURL(String, reason: String)
    /// The policy itself cannot be used: a bad host pattern, pin or CA certificate, named by its source.
    case invalidPolicy(source: String, reason: String)
    /// No pattern names `host` and `unpinnedHosts` is `deny`; refused before connecting.
    case hostNotPermitted(host: String, unpinnedHostsSource: String)
    /// The verified chain has none of the pins an entry governing `host` expects.
    case pinMismatch(host: String, pattern: String, source: String, expected: [String], presented: [String])
    /// A certificate of the chain is past its `notAfter` (or before its `notBefore`).
    case certificateExpired(host: String, subject: String, notAfter: String)
    /// The chain verified but none of its names is `host`.
    case hostNameMismatch(host: String, reason: String)
    /// The chain does not verify up to a trusted root (the entry's CA certificates, or the system's).
    case untrustedChain(host: String, roots: String, reason: String)
    /// The server sent more certificates or bytes of chain than the channel accepts.
    case chainTooLarge(host: String, certificates: Int, bytes: Int)
    /// The TLS handshake failed for another reason (an alert, or bytes that are not TLS).
    case handshakeFailed(host: String, reason: String)
    /// Connecting, the handshake or the response took longer than its timeout.
    case timedOut(host: String, stage: Stage, seconds: Double)
    /// The TCP connection could not be made.
    case connectFailed(host: String, port: Int, reason: String)
    /// The server's answer is not HTTP.
    case malformedResponse(host: String, reason: String)
    /// The server closed the connection before the response ended.
    case closedMidStream(host: String)
    /// The response is larger than `SecureChannel.Configuration.maxResponseBytes`.
    case responseTooLarge(host: String, limit: Int)
    /// The client certificate or key of the policy could not be read (its path and why; never its content).
    case clientCertificateUnreadable(path: String, reason: String)
    /// The app's key is unavailable: no new request or tunnel connection until it is back.
    case keyUnavailable(appId: String, reason: String)
    /// The key was revoked while the request or connection was open: it was cut.
    case revoked(appId: String, reason: String)
    /// The container is locked and `network.onLock` (`refuseNew` or `cut`) admits no new connection.
    case locked(appId: String, onLock: String)
    /// The container was locked under `network.onLock: cut`: the open request or connection was cut.
    case cutOnLock(appId: String)
    /// The app's network policy changed and refuses the server of an open request or connection
    /// (`reason`, as a new connection would be refused): it was cut.
    case policyChanged(host: String, reason: String)

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): return "cannot use URL \(url): \(reason)"
        case .invalidPolicy(let source, let reason): return "the network policy at \(source) cannot be used: \(reason)"
        case .hostNotPermitted(let host, let source):
            return "\(host): no network.pins pattern names this host and unpinnedHosts is deny (\(source))"
        case .pinMismatch(let host, let pattern, let source, let expected, let presented):
            return "\(host): the server's key is not pinned by \(pattern) (\(source)): expected one of "
                + "[\(expected.joined(separator: ", "))], the server showed [\(presented.joined(separator: ", "))]"
        case .certificateExpired(let host, let subject, let notAfter):
            return "\(host): the certificate \(subject) is expired or not yet valid (notAfter \(notAfter))"
        case .hostNameMismatch(let host, let reason): return "\(host): the certificate is not for this host: \(reason)"
        case .untrustedChain(let host, let roots, let reason):
            return "\(host): the chain does not verify up to \(roots): \(reason)"
        case .chainTooLarge(let host, let certificates, let bytes):
            return "\(host): the server sent a chain of \(certificates) certificates (\(bytes) bytes), over the limit"
        case .handshakeFailed(let host, let reason): return "\(host): the TLS handshake failed: \(reason)"
        case .timedOut(let host, let stage, let seconds):
            return "\(host): no \(stage.rawValue) within \(seconds) s"
        case .connectFailed(let host, let port, let reason): return "cannot connect to \(host):\(port): \(reason)"
        case .malformedResponse(let host, let reason): return "\(host): the answer is not HTTP: \(reason)"
        case .closedMidStream(let host): return "\(host): the server closed the connection before the response ended"
        case .responseTooLarge(let host, let limit): return "\(host): the response is over \(limit) bytes"
        case .clientCertificateUnreadable(let path, let reason):
            return "cannot read the client certificate or key \(path): \(reason)"
        case .keyUnavailable(let appId, let reason):
            return "\(appId): the app's key is unavailable (\(reason)): no connection until it is back"
        case .revoked(let appId, let reason): return "\(appId): the app's key was revoked (\(reason)): connection cut"
        case .locked(let appId, let onLock):
            return
                "\(appId): the container is locked (network.onLock: \(onLock)): no new connection until it is unlocked"
        case .cutOnLock(let appId): return "\(appId): the container was locked (network.onLock: cut): connection cut"
        case .policyChanged(let host, let reason):
            return "\(host): the network policy changed and refuses this server now (\(reason)): connection cut"
        }
    }
}
