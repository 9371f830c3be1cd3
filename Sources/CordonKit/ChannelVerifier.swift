import CordonProtocol
import Crypto
import Foundation
import NIOCore
import NIOSSL
import SwiftASN1
// The chain is checked at the verifier's clock (`now`, fixed in tests), not the wall clock.
@_spi(FixedExpiryValidationTime) import X509

/// Decides and verifies a pinned TLS connection from an app's `NetworkPolicy`
/// (docs/ARCHITECTURE.md, "Pinned channel"): which entries govern a host, and, in NIOSSL's
/// custom verification callback, whether the server's chain satisfies them.
///
/// The chain is verified with swift-certificates' `Verifier` (`RFC5280Policy` at the injected
/// time, `ServerIdentityPolicy` for the host name) up to the governing entries' CA certificates,
/// or the system's roots when none has any; then every governing entry must be satisfied: the
/// chain ends in one of its CA certificates (when it has any) *and* the server's own (leaf)
/// certificate has one of its `pinSha256` values (when it has any), as curl's `--pinnedpubkey`. A host no pattern names is refused before connecting under
/// `unpinnedHosts: deny`, and verified against the system roots and its name under `systemTrust`.
public struct ChannelVerifier: Sendable {
    /// What governs a host.
    public enum Governance: Sendable, Equatable {
        /// The entries of the most specific pattern that matches (`pattern` as written).
        case pinned(pattern: String, entries: [NetworkPolicy.Pin])
        /// No pattern matches and `unpinnedHosts` is `systemTrust`.
        case systemTrust
    }

    /// The policy enforced.
    public let policy: NetworkPolicy
    /// The PEM bundle of the system's roots.
    public let systemRootsPath: String
    /// At most this many certificates in the server's chain.
    public let maxChainCertificates: Int
    /// At most this many DER bytes in the server's chain.
    public let maxChainBytes: Int
    /// The validation time of certificates.
    public let now: @Sendable () -> Date

    /// A verifier for `policy`; `now` is the validation time (injectable for tests).
    public init(
        policy: NetworkPolicy, systemRootsPath: String = "/etc/ssl/certs/ca-certificates.crt",
        maxChainCertificates: Int = 10, maxChainBytes: Int = 64 * 1024, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.policy = policy
        self.systemRootsPath = systemRootsPath
        self.maxChainCertificates = maxChainCertificates
        self.maxChainBytes = maxChainBytes
        self.now = now
    }

    /// The entries governing `host`; throws `hostNotPermitted` for a host no pattern names under
    /// `unpinnedHosts: deny`, and `invalidPolicy` for a pattern that is not one.
    public func governance(host: String) throws(SecureChannelError) -> Governance {
        var best: (specificity: Int, pattern: String, entries: [NetworkPolicy.Pin])?
        for entry in policy.pins {
            var entryBest: HostPattern?
            for (index, text) in entry.hosts.enumerated() {
                let pattern: HostPattern
                do { pattern = try HostPattern(validating: text) } catch {
                    throw .invalidPolicy(source: "\(entry.source)/hosts/\(index)", reason: error.description)
                }
                guard pattern.matches(host) else { continue }
                if entryBest.map({ pattern.specificity > $0.specificity }) ?? true { entryBest = pattern }
            }
            guard let found = entryBest else { continue }
            switch best {
            case .some(let current) where current.specificity > found.specificity: continue
            case .some(let current) where current.specificity == found.specificity: best?.entries.append(entry)
            default: best = (found.specificity, found.text, [entry])
            }
        }
        if let best { return .pinned(pattern: best.pattern, entries: best.entries) }
        guard policy.unpinnedHosts == "systemTrust" else {
            throw .hostNotPermitted(host: host, unpinnedHostsSource: policy.unpinnedHostsSource)
        }
        return .systemTrust
    }

    /// Verifies the chain the server presented (DER, leaf first) for `host` under `governance`;
    /// returns the verified chain (leaf to root) or throws why it is refused.
    public func verify(host: String, governance: Governance, presented: [[UInt8]]) async throws(SecureChannelError)
        -> [Certificate]
    {
        let bytes = presented.reduce(0) { $0 + $1.count }
        guard !presented.isEmpty else { throw .handshakeFailed(host: host, reason: "the server sent no certificate") }
        guard presented.count <= maxChainCertificates, bytes <= maxChainBytes else {
            throw .chainTooLarge(host: host, certificates: presented.count, bytes: bytes)
        }
        var certificates: [Certificate] = []
        for der in presented {
            do { certificates.append(try Certificate(derEncoded: der)) } catch {
                throw .handshakeFailed(host: host, reason: "the server's certificate does not parse: \(error)")
            }
        }
        let shown = certificates.map(Self.spkiHash)
        let entries: [NetworkPolicy.Pin]
        if case .pinned(_, let pinned) = governance { entries = pinned } else { entries = [] }
        let anchors = try entryAnchors(entries)
        let allAnchors = anchors.flatMap { $0 }
        let roots = allAnchors.isEmpty ? try systemRoots() : allAnchors
        let rootsName =
            allAnchors.isEmpty
            ? "the system roots (\(systemRootsPath))"
            : "the CA certificates of \(entries.filter { !$0.caCertificates.isEmpty }.map(\.source).joined(separator: ", "))"
        let time = now()
        let isAddress = HostPattern.isAddress(host)
        var full = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            ServerIdentityPolicy(serverHostname: isAddress ? nil : host, serverIP: isAddress ? host : nil)
        }
        let intermediates = CertificateStore(certificates.dropFirst())
        let chain: [Certificate]
        switch await full.validate(leaf: certificates[0], intermediates: intermediates) {
        case .validCertificate(let valid): chain = Array(valid)
        case .couldNotValidate(let failures):
            if let stale = certificates.first(where: { time > $0.notValidAfter || time < $0.notValidBefore }) {
                throw .certificateExpired(
                    host: host, subject: "\(stale.subject)", notAfter: "\(stale.notValidAfter)")
            }
            var chainOnly = Verifier(rootCertificates: CertificateStore(roots)) {
                RFC5280Policy(fixedExpiryValidationTime: time)
            }
            if case .validCertificate = await chainOnly.validate(leaf: certificates[0], intermediates: intermediates) {
                let names = failures.map(\.policyFailureReason.description)
                throw .hostNameMismatch(host: host, reason: names.first ?? "no subject alternative name matches")
            }
            let reasons = failures.map(\.policyFailureReason.description)
            throw .untrustedChain(
                host: host, roots: rootsName, reason: reasons.first ?? "no path from the server's certificate to a root"
            )
        }
        // The pin is the leaf's key only, as curl's `--pinnedpubkey` checks it: a pinned CA key
        // would admit every certificate that CA issues, which is what `caCertificates` says.
        let leafHash = chain.first.map(Self.spkiHash) ?? shown[0]
        for (entry, entryRoots) in zip(entries, anchors) {
            // An entry with both asks for both: its CA *and* one of its keys (as curl's
            // `--cacert` with `--pinnedpubkey`); a valid chain from its CA alone is not enough.
            let anchored = chain.last.map { root in entryRoots.contains(root) } ?? false
            guard entry.caCertificates.isEmpty || anchored else {
                throw .untrustedChain(
                    host: host, roots: "the CA certificates of \(entry.source)", reason: "the chain ends in another CA")
            }
            guard entry.pinSha256.isEmpty || entry.pinSha256.contains(leafHash) else {
                throw .pinMismatch(
                    host: host, pattern: Self.patternText(governance), source: entry.source,
                    expected: entry.pinSha256, presented: [leafHash])
            }
        }
        return chain
    }

    /// A TLS context for this policy: TLS 1.2 or later, the client certificate when the policy
    /// has one, ALPN `alpn`; verification is always the callback of `makeHandler`.
    public func makeContext(alpn: [String]) throws(SecureChannelError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        // The callback replaces OpenSSL's verification, host name included (`verify`).
        tls.certificateVerification = .noHostnameVerification
        tls.applicationProtocols = alpn
        if let client = policy.clientCertificate {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(client.certificate).map { .certificate($0) }
            } catch {
                throw .clientCertificateUnreadable(path: client.certificate, reason: "not a PEM certificate chain")
            }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: client.key, format: .pem))
            } catch {
                throw .clientCertificateUnreadable(path: client.key, reason: "not a PEM private key")
            }
        }
        do { return try NIOSSLContext(configuration: tls) } catch {
            throw .invalidPolicy(source: "clientCertificate", reason: "\(error)")
        }
    }

    /// The TLS handler for one connection to `host`: SNI for a name (not for an address), and
    /// the verification callback, which records why it refused in `outcome`.
    public func makeHandler(context: NIOSSLContext, host: String, governance: Governance, outcome: VerificationOutcome)
        throws(SecureChannelError) -> NIOSSLClientHandler
    {
        let verifier = self
        do {
            return try NIOSSLClientHandler(
                context: context, serverHostname: HostPattern.isAddress(host) ? nil : host,
                customVerificationCallback: { certificates, promise in
                    let presented = certificates.map { (try? $0.toDERBytes()) ?? [] }
                    promise.completeWithTask {
                        do throws(SecureChannelError) {
                            _ = try await verifier.verify(host: host, governance: governance, presented: presented)
                            outcome.accept(presented)
                            return .certificateVerified
                        } catch {
                            outcome.record(error)
                            return .failed
                        }
                    }
                })
        } catch {
            throw .handshakeFailed(host: host, reason: "\(error)")
        }
    }

    /// RFC 7469's `pin-sha256`: base64 of the SHA-256 of the certificate's DER SubjectPublicKeyInfo.
    public static func spkiHash(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        do { try serializer.serialize(certificate.publicKey) } catch { return "" }
        return Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
    }

    private static func patternText(_ governance: Governance) -> String {
        if case .pinned(let pattern, _) = governance { return pattern }
        return "(none)"
    }

    /// Each entry's CA certificates, parsed; a bad one is `invalidPolicy` naming its entry.
    private func entryAnchors(_ entries: [NetworkPolicy.Pin]) throws(SecureChannelError) -> [[Certificate]] {
        var result: [[Certificate]] = []
        for entry in entries {
            var parsed: [Certificate] = []
            for (index, pem) in entry.caCertificates.enumerated() {
                let source = "\(entry.source)/caCertificates/\(index)"
                guard let documents = try? PEMDocument.parseMultiple(pemString: pem), !documents.isEmpty else {
                    throw .invalidPolicy(source: source, reason: "not a PEM certificate")
                }
                for document in documents {
                    guard let certificate = try? Certificate(derEncoded: document.derBytes) else {
                        throw .invalidPolicy(source: source, reason: "the PEM block is not an X.509 certificate")
                    }
                    parsed.append(certificate)
                }
            }
            result.append(parsed)
        }
        return result
    }

    private func systemRoots() throws(SecureChannelError) -> [Certificate] {
        if let cached = SystemRoots.cache.withLock({ $0[systemRootsPath] }) { return cached }
        guard let text = try? String(contentsOfFile: systemRootsPath, encoding: .utf8),
            let documents = try? PEMDocument.parseMultiple(pemString: text)
        else {
            throw .invalidPolicy(source: systemRootsPath, reason: "the system roots cannot be read")
        }
        let roots = documents.compactMap { try? Certificate(derEncoded: $0.derBytes) }
        SystemRoots.cache.withLock { $0[systemRootsPath] = roots }
        return roots
    }
}
